#include "planner/checkmate_plan.h"

#include <chrono>
#include <cstdlib>
#include <sstream>
#include <utility>

#include "solvers/remat_milp.h"
#include "solvers/remat_problem.h"
#include "util/isolated_call.h"

namespace memplan::planner {
namespace {

constexpr std::size_t kNever = static_cast<std::size_t>(-1);

// A tensor the schedule may free: made by a node, not a graph output.
bool freeable(const ir::Tensor& t) { return t.producer != ir::kNoNode && !t.is_graph_output; }

// free_after[p]: the tensors run p reads or makes last before its
// producer's next run (or ever), each once.
std::vector<std::vector<ir::TensorId>> tensor_frees(const ir::Graph& g,
                                                    std::span<const std::size_t> runs) {
  std::vector<std::size_t> next_read(g.tensors().size(), kNever);
  std::vector<std::size_t> next_make(g.nodes().size(), kNever);
  std::vector<std::vector<ir::TensorId>> free_after(runs.size());
  auto dead = [&](ir::TensorId t) {
    const ir::Tensor& x = g.tensor(t);
    return freeable(x) && (next_read[t] == kNever || next_make[x.producer] < next_read[t]);
  };
  for (std::size_t p = runs.size(); p-- > 0;) {
    const ir::Node& n = g.nodes()[runs[p]];
    for (ir::TensorId t : n.inputs)
      if (next_read[t] != p && dead(t)) {
        free_after[p].push_back(t);
        next_read[t] = p;  // marks it taken; set again below
      }
    for (ir::TensorId t : n.outputs)
      if (dead(t)) free_after[p].push_back(t);
    for (ir::TensorId t : n.inputs) next_read[t] = p;
    next_make[runs[p]] = p;
  }
  return free_after;
}

std::string encode(const solvers::RematSchedule& s) {
  std::ostringstream o;
  o.precision(17);
  o << static_cast<int>(s.status) << ' ' << s.seconds << ' '
    << (s.bound_seconds ? *s.bound_seconds : -1.0) << ' ' << s.rounded << ' ' << s.warm_started
    << ' ' << s.runs.size();
  for (std::size_t r : s.runs) o << ' ' << r;
  return o.str();
}

std::optional<solvers::RematSchedule> decode(const std::string& text) {
  std::istringstream in(text);
  solvers::RematSchedule s;
  int status = 0;
  double bound = 0;
  std::size_t n = 0;
  if (!(in >> status >> s.seconds >> bound >> s.rounded >> s.warm_started >> n)) return {};
  s.status = static_cast<solvers::SolveStatus>(status);
  if (bound >= 0) s.bound_seconds = bound;
  s.runs.resize(n);
  for (std::size_t& r : s.runs)
    if (!(in >> r)) return {};
  return s;
}

// Cbc in a forked child, as the ILP runs it (a crash in Cbc is an outcome,
// not memplan's end); MEMPLAN_INPROCESS_CBC=1 keeps it in-process. Cbc's
// preprocessing, stopped by the clock, can crash (CglPreProcess::postProcess,
// a 98-node chain at 5 s): a crash is retried once without it, in what is
// left of the limit.
solvers::RematSchedule solve_isolated(const solvers::RematProblem& p, solvers::RematMilpOptions o,
                                      volatile bool* interrupted, std::string& note) {
  if (util::run_in_process_requested("MEMPLAN_INPROCESS_CBC")) return solve_remat_milp(p, o);
  const auto start = std::chrono::steady_clock::now();
  const double limit = o.time_limit_seconds;
  for (;;) {
    const auto timeout =
        std::chrono::milliseconds(static_cast<std::int64_t>((2 * o.time_limit_seconds + 30) * 1e3));
    const util::IsolatedOutcome out =
        util::run_isolated([&] { return encode(solve_remat_milp(p, o)); }, timeout, {},
                           [&] { return interrupted != nullptr && *interrupted; });
    if (out.kind == util::IsolatedOutcome::Kind::kOk)
      if (auto s = decode(out.payload)) return std::move(*s);
    const double left =
        limit - std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (out.kind == util::IsolatedOutcome::Kind::kSignaled && o.preprocess && left > 0) {
      o.preprocess = false;
      o.time_limit_seconds = left;
      note = "checkmate: Cbc crashed (" + util::signal_name(out.signal) +
             ") in its preprocessing; solved again without it";
      continue;
    }
    note = out.kind == util::IsolatedOutcome::Kind::kThrew
               ? "checkmate: Cbc failed: " + out.payload
               : "checkmate: Cbc's child process ended without an answer";
    solvers::RematSchedule none;
    none.status = solvers::SolveStatus::kTimeLimit;
    return none;
  }
}

std::vector<std::size_t> runs_of(std::span<const Step> schedule) {
  std::vector<std::size_t> runs;
  for (const Step& s : schedule)
    if (s.on_node()) runs.push_back(s.id);
  return runs;
}

// Recompute for each tensor that a recompute step made resident again.
std::vector<Decision> decisions_of(const ir::Graph& g, std::span<const Step> schedule) {
  std::vector<Decision> d(g.tensors().size(), Decision::kKeep);
  std::vector<char> resident(g.tensors().size(), 0);
  for (const Step& s : schedule) {
    if (s.op == StepOp::kFree) resident[s.id] = 0;
    if (!s.on_node()) continue;  // a warm start's own schedule may copy, too
    for (ir::TensorId t : g.nodes()[s.id].outputs) {
      if (s.op == StepOp::kRecompute && !resident[t]) d[t] = Decision::kRecompute;
      resident[t] = 1;
    }
  }
  return d;
}

std::string why_none(const solvers::RematSchedule& s) {
  return s.status == solvers::SolveStatus::kInfeasible
             ? "checkmate: no schedule fits the budget (the MILP is infeasible)"
             : "checkmate: Cbc found no schedule within the time limit";
}

}  // namespace

std::vector<Step> schedule_of_runs(const ir::Graph& graph, std::span<const std::size_t> runs) {
  const auto free_after = tensor_frees(graph, runs);
  std::vector<Step> steps;
  std::vector<char> ran(graph.nodes().size(), 0);
  for (std::size_t p = 0; p < runs.size(); ++p) {
    const auto v = static_cast<std::uint32_t>(runs[p]);
    steps.push_back({ran[v] ? StepOp::kRecompute : StepOp::kCompute, v});
    ran[v] = 1;
    for (ir::TensorId t : free_after[p]) steps.push_back({StepOp::kFree, t});
  }
  return steps;
}

CheckmateSchedule checkmate_schedule(const ir::Graph& graph, const ir::NodeCosts& costs,
                                     std::uint64_t budget_bytes, const CheckmateOptions& options) {
  CheckmateSchedule out;
  if (graph.nodes().size() > kCheckmateMaxNodes) {
    out.note = "checkmate: " + std::to_string(graph.nodes().size()) + " nodes, more than the " +
               std::to_string(kCheckmateMaxNodes) + " its MILP is built for";
    return out;
  }
  for (const ir::Tensor& t : graph.tensors())
    if (t.starts_on_host) {
      out.note =
          "checkmate keeps the training state on the device: '" + t.name + "' starts on the host";
      return out;
    }
  const auto start = std::chrono::steady_clock::now();
  const solvers::RematProblem problem = solvers::remat_problem(graph, costs, budget_bytes);
  solvers::RematMilpOptions mo;
  mo.time_limit_seconds = options.time_limit_seconds;
  mo.threads = options.threads;
  mo.max_branch_nodes = options.max_branch_nodes;
  mo.warm_start = runs_of(options.warm_start);
  const solvers::RematSchedule s = solve_isolated(problem, mo, options.interrupted, out.note);
  out.solve_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (s.runs.empty() && s.status != solvers::SolveStatus::kInfeasible &&
      !options.warm_start.empty()) {
    // As the ILP keeps its warm start when Cbc fails: the plan started from.
    out.status = solvers::SolveStatus::kFeasible;
    out.schedule = options.warm_start;
    out.decisions = decisions_of(graph, out.schedule);
    for (const Step& st : out.schedule)
      if (st.op == StepOp::kRecompute) out.recompute_seconds += costs.seconds[st.id];
    out.note = (out.note.empty() ? why_none(s) : out.note) + "; kept the warm start";
    return out;
  }
  if (s.runs.empty()) {
    if (out.note.empty()) out.note = why_none(s);
    out.status =
        s.status == solvers::SolveStatus::kInfeasible ? s.status : solvers::SolveStatus::kTimeLimit;
    return out;
  }
  out.status = s.status;
  out.schedule = schedule_of_runs(graph, s.runs);
  out.decisions = decisions_of(graph, out.schedule);
  out.recompute_seconds = s.seconds - problem.compute_seconds();
  if (s.bound_seconds) out.bound_seconds = *s.bound_seconds - problem.compute_seconds();
  const std::string retried = out.note.empty() ? "" : out.note + "; ";
  out.note = retried + "checkmate: " + (s.warm_started ? "warm-started" : "no warm start") +
             (s.rounded ? "; bytes rounded to Cbc's precision (the optimum may be missed)" : "");
  return out;
}

}  // namespace memplan::planner
