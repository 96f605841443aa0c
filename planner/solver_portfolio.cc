#include "planner/solver_portfolio.h"

#include <algorithm>

#include "planner/baseline_plan.h"
#include "planner/checkmate_plan.h"
#include "solvers/greedy_solver.h"
#include "solvers/problem_builder.h"
#include "solvers/solver_registry.h"

namespace memplan::planner::detail {
namespace {

bool fits(const Attempt& a, const PlanRequest& req) {
  return a.plan.predicted.peak_bytes <= req.budget_bytes;
}

// `other` takes `mine`'s place where it fits and simulates faster (or
// `mine` does not fit); the note says by how much. Returns whether it did.
bool keep_if_faster(Attempt& mine, Attempt other, const std::string& what, const PlanRequest& req) {
  const auto& op = other.plan.predicted;
  const auto& mp = mine.plan.predicted;
  if (!fits(other, req) || (fits(mine, req) && mp.iteration_seconds <= op.iteration_seconds))
    return false;
  const std::string how =
      fits(mine, req) ? what + " simulated " +
                            std::to_string((mp.iteration_seconds - op.iteration_seconds) * 1e3) +
                            " ms faster; kept it"
                      : what + " fitted where this one did not; kept it";
  other.plan.solver.solve_seconds += mine.plan.solver.solve_seconds;
  other.solution.note = mine.solution.note;
  append_note(other.solution.note, how);
  mine = std::move(other);
  return true;
}

}  // namespace

// The heuristic's plan: the greedy's, the recompute-only greedy's, or the
// swap-only or recompute-only pipeline's, whichever fits and simulates
// fastest. The recompute-only greedy's own tightening rounds can fit at a
// model budget the mixed runs never reach (resnet50 h100 30 %: 50.59 %
// against 53.36 %); the pipelines with one way off the device make a
// mixed plan never worse than either alone (at 20 % the swap-only plan fit
// bert_base where the mixed one did not, and beat it by 1.7-5.4 pt on
// GPT-2 medium and large and BERT-large: docs/BENCHMARKS.md, issue 15).
// On graphs of up to kAlternativesMaxCandidates tensors (more than the
// candidates: the problem is built inside run_solver), as its other variants.
Attempt run_heuristic(const ir::Graph& g, const ir::NodeCosts& costs, const PlanRequest& req,
                      const solvers::SolverOptions& so) {
  Attempt h = run_solver(g, costs, req, *solvers::make_solver("greedy"), so);
  if (!req.evictions.permits_both() ||
      g.tensors().size() > solvers::GreedySolver::kAlternativesMaxCandidates)
    return h;
  solvers::SolverOptions ro = so;
  ro.warm_start.clear();
  Attempt r = run_solver(g, costs, req, *solvers::make_solver("recompute-greedy"), ro);
  r.plan.solver.name = "greedy";
  keep_if_faster(h, std::move(r), "the recompute-only run", req);
  // As `--allow swap` and `--allow recompute` run it, rescues included.
  if (!req.one_way_plans) return h;
  for (const solvers::Evictions only :
       {solvers::Evictions::swap_only(), solvers::Evictions::recompute_only()}) {
    PlanRequest one = req;
    one.evictions = only;
    Attempt a = run_solver(g, costs, one, *solvers::make_solver("greedy"), ro);
    keep_if_faster(h, std::move(a), only.swap ? "the swap-only plan" : "the recompute-only plan",
                   req);
  }
  return h;
}

// The ILP is exact for its model only, and its budget-tightening rounds are
// its own: the heuristic's final plan (its own rounds) and the
// recompute-only ILP's, which the model may price better than its swaps,
// are candidate plans too, and the fastest that fits is handed out. Its
// status is then `feasible`; the bound stays the full ILP's (a bound on the
// model). Returns the name of the solver whose plan it is.
std::string keep_the_fastest_plan(const ir::Graph& g, const ir::NodeCosts& costs,
                                  const PlanRequest& req, const solvers::SolverOptions& so,
                                  Attempt& ilp, std::vector<std::string> others) {
  const std::optional<double> bound = ilp.plan.solver.bound_seconds;
  const std::string status = ilp.plan.solver.status;
  std::string used = "ilp";
  solvers::SolverOptions oo = so;
  oo.warm_start.clear();
  // The full limit for each: with less, the recompute-only ILP stopped short
  // of the plan `compare`'s own recompute-ilp run found (gpt2_medium h100 50 %).
  for (const std::string& name : others) {
    if (name == "recompute-ilp" && !req.evictions.permits_both()) continue;
    if (name != "greedy" && spent(req)) {
      append_note_once(ilp.solution.note, kSpentNote);
      continue;
    }
    Attempt a = name == "greedy" ? run_heuristic(g, costs, req, oo)
                                 : run_solver(g, costs, req, *solvers::make_solver(name), oo);
    if (keep_if_faster(ilp, std::move(a), "the " + name + " plan", req)) used = name;
  }
  ilp.plan.solver.bound_seconds = bound;
  ilp.plan.solver.status =
      used == "ilp" ? status : std::string(to_string(solvers::SolveStatus::kFeasible));
  return used;
}

Attempt run_checkmate(const ir::Graph& g, const ir::NodeCosts& costs, const PlanRequest& req,
                      const solvers::SolverOptions& so, int max_branch_nodes) {
  CheckmateOptions co;
  co.time_limit_seconds = solvers::seconds_allowed(so);
  co.threads = req.threads;
  co.max_branch_nodes = max_branch_nodes;
  co.interrupted = req.interrupted;
  Attempt out;
  CheckmateSchedule c;
  if (!req.evictions.recompute) {
    c.note = "checkmate recomputes only, which --allow leaves out";
  } else if (g.nodes().size() <= kCheckmateMaxNodes) {
    PlanRequest r = req;
    r.evictions = solvers::Evictions::recompute_only();
    solvers::SolverOptions wo = so;
    wo.warm_start.clear();
    const Attempt warm = run_solver(g, costs, r, *solvers::make_solver("recompute-greedy"), wo);
    if (fits(warm, req)) co.warm_start = warm.plan.schedule;
    co.time_limit_seconds = solvers::seconds_allowed(so);
  }
  if (c.note.empty()) c = checkmate_schedule(g, costs, req.budget_bytes, co);
  const bool found = !c.schedule.empty();
  PlanHeader header{req.model_path, req.model_sha256, req.budget_bytes, {}};
  header.solver.name = "checkmate";
  header.solver.status = to_string(found ? c.status : solvers::SolveStatus::kHeuristic);
  header.solver.objective_seconds = c.recompute_seconds;
  header.solver.bound_seconds = c.bound_seconds;
  header.solver.solve_seconds = c.solve_seconds;
  if (!found) c.schedule = baseline_schedule(g);
  out.solution.status = found ? c.status : solvers::SolveStatus::kInfeasible;
  out.solution.objective_seconds = c.recompute_seconds;
  out.solution.note = c.note;
  out.plan =
      assemble_plan(g, costs, std::move(header), std::move(c.schedule), std::move(c.decisions));
  return out;
}

// auto: the heuristic, then the ILP warm-started from it, then the
// recompute-only ILP; the plan that simulates fastest wins.
Attempt run_auto(const ir::Graph& g, const ir::NodeCosts& costs, const PlanRequest& req,
                 const solvers::SolverOptions& so, std::string& used) {
  Attempt h = run_heuristic(g, costs, req, so);
  used = "greedy";
  if (spent(req)) {
    append_note_once(h.solution.note, kSpentNote);
    return h;
  }
  solvers::ProblemOptions po;
  po.evictions = req.evictions;
  po.offload_state = req.offload_state;
  const solvers::Problem p = solvers::build_problem(g, costs, req.budget_bytes, po);
  solvers::SolverOptions io = so;
  io.warm_start.assign(p.candidates.size(), Decision::kKeep);
  for (std::size_t i = 0; i < p.candidates.size(); ++i)
    io.warm_start[i] = h.plan.decisions[p.candidates[i].tensor];
  Attempt x = run_solver(g, costs, req, *solvers::make_solver("ilp"), io);
  used = "ilp";
  if (!fits(x, req) ||
      (fits(h, req) && h.plan.predicted.iteration_seconds <= x.plan.predicted.iteration_seconds)) {
    x = std::move(h);
    used = "greedy";
  }
  if (req.evictions.permits_both() && spent(req)) {
    append_note_once(x.solution.note, kSpentNote);
  } else if (req.evictions.permits_both()) {
    // The full limit, as `compare`'s own recompute-ilp run gets.
    Attempt r = run_solver(g, costs, req, *solvers::make_solver("recompute-ilp"), so);
    if (keep_if_faster(x, std::move(r), "the recompute-ilp plan", req)) {
      used = "recompute-ilp";
      // Optimal, if so, for the restricted model only.
      x.plan.solver.status = to_string(solvers::SolveStatus::kFeasible);
      x.plan.solver.bound_seconds.reset();
    }
  }
  // Nothing to gain where the plan costs nothing; and a short limit, so
  // that auto stays quick on small graphs where Cbc proves nothing fast.
  const bool costs_nothing = fits(x, req) && x.plan.predicted.iteration_seconds <=
                                                 x.plan.predicted.baseline_iteration_seconds;
  solvers::SolverOptions co = so;
  co.time_limit_seconds = std::min(so.time_limit_seconds, kAutoCheckmateSeconds);
  if (!req.evictions.recompute || g.nodes().size() > kAutoCheckmateMaxNodes || spent(req) ||
      costs_nothing)
    return x;
  Attempt c = run_checkmate(g, costs, req, co, kAutoCheckmateBranchNodes);
  if (c.solution.status != solvers::SolveStatus::kInfeasible &&
      keep_if_faster(x, std::move(c), "the checkmate plan", req)) {
    used = "checkmate";
    x.plan.solver.status = to_string(solvers::SolveStatus::kFeasible);
    x.plan.solver.bound_seconds.reset();
  }
  return x;
}

}  // namespace memplan::planner::detail
