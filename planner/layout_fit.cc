#include "planner/layout_fit.h"

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "planner/memory_layout.h"
#include "planner/reachable_floor.h"
#include "solvers/greedy_solver.h"

namespace memplan::planner {

namespace {

constexpr double kFloorTimeLimitSeconds = 10;
// The gap (a share of the budget) below which bisection stops.
constexpr std::uint64_t kBisectionGapDivisor = 200;  // 0.5 %

bool interrupted(const PlanRequest& r) { return r.interrupted != nullptr && *r.interrupted; }

// A plan searched for `planning` bytes, laid out, for the asked budget.
PlanOutcome laid_out_plan(const ir::Graph& graph, const ir::NodeCosts& costs,
                          const PlanningGraph& order, const PlanRequest& request,
                          std::uint64_t planning) {
  PlanRequest r = request;
  r.budget_bytes = planning;
  PlanOutcome out = search_plan(graph, costs, order, r);
  if (!out.fits) return out;
  out.plan.budget_bytes = request.budget_bytes;  // what it was made for; it fits more
  out.plan.memory_layout = compute_memory_layout(graph, out.plan);
  return out;
}

// The replans' first fit is searched for a budget lowered by a guess at the
// layout's loss, which overshoots: the loss is not proportional to the peak
// (gpt2_xl a100-40gb 30 %: a plan for a 12.20 GiB peak kept for a 16.27 GiB
// budget). Between the planning budget that fitted and the lowest one that
// did not, a few bisection rounds look for more memory to plan with; the
// fastest plan whose layout fits is kept.
void bisect_planning_budget(const ir::Graph& graph, const ir::NodeCosts& costs,
                            const PlanningGraph& order, const PlanRequest& request,
                            std::uint64_t overshot, int max_bisections, LayoutFitOutcome& out) {
  const std::uint64_t budget = request.budget_bytes;
  std::uint64_t lo = out.planning_budget_bytes, hi = overshot;
  for (int round = 0; round < max_bisections && hi - lo > budget / kBisectionGapDivisor; ++round) {
    if (interrupted(request)) return;
    const std::uint64_t mid = lo + (hi - lo) / 2;
    PlanOutcome again = laid_out_plan(graph, costs, order, request, mid);
    ++out.replans;
    if (!again.fits || again.plan.memory_layout->arena_bytes > budget) {
      hi = mid;
      continue;
    }
    lo = mid;
    if (again.plan.predicted.iteration_seconds < out.outcome.plan.predicted.iteration_seconds) {
      out.outcome = std::move(again);
      out.planning_budget_bytes = mid;
    }
  }
}

// The requests whose floors are searched: the request, and where it may
// keep the training state on the host or not (kAuto), also the one that does
// not. Keeping it there reaches a lower peak, but that plan's layout can
// lose more than it gains: gpt2_small a100-40gb, greedy: its floor plan's
// arena is 2.20 GiB with the state on the host, 2.10 GiB without.
std::vector<PlanRequest> floor_requests(const PlanRequest& request) {
  std::vector<PlanRequest> out{request};
  if (state_on_host_allowed(request) && request.state_on_host == PlanRequest::StateOnHost::kAuto) {
    out.push_back(request);
    out.back().state_on_host = PlanRequest::StateOnHost::kNever;
  }
  return out;
}

// The floor of one of floor_requests(): the smallest reachable peak, and the
// plan for it laid out (none where even that search finds no plan).
struct Floor {
  std::uint64_t peak_bytes = 0;
  std::optional<PlanOutcome> plan;
  // What search_plan_with_layout() can promise from this floor.
  std::uint64_t budget_bytes() const {
    return plan ? std::max(peak_bytes, plan->plan.memory_layout->arena_bytes) : peak_bytes;
  }
};

Floor floor_of(const ir::Graph& graph, const ir::NodeCosts& costs, const PlanningGraph& order,
               const PlanRequest& request) {
  Floor f;
  f.peak_bytes = smallest_reachable_peak(graph, costs, request.evictions, request.offload_state,
                                         state_on_host_allowed(request));
  PlanRequest at_floor = request;
  // At the floor the fallback's evict-all plans decide; a long ILP search
  // would only slow the failure path that reports this figure.
  at_floor.time_limit_seconds = std::min(request.time_limit_seconds, kFloorTimeLimitSeconds);
  at_floor.budget_bytes = f.peak_bytes;
  at_floor.one_way_plans = false;
  PlanOutcome out = search_plan(graph, costs, order, at_floor);
  if (!out.fits) return f;
  out.plan.memory_layout = compute_memory_layout(graph, out.plan);
  f.plan = std::move(out);
  return f;
}

// Of floor_requests()' floors, the one with the smallest budget.
Floor lowest_floor(const ir::Graph& graph, const ir::NodeCosts& costs, const PlanningGraph& order,
                   const PlanRequest& request) {
  std::optional<Floor> best;
  for (const PlanRequest& r : floor_requests(request)) {
    Floor f = floor_of(graph, costs, order, r);
    if (!best || f.budget_bytes() < best->budget_bytes() ||
        (f.plan && !best->plan && f.budget_bytes() == best->budget_bytes()))
      best = std::move(f);
  }
  return std::move(*best);
}

}  // namespace

// A tighter plan's layout loses about what this one lost over its peak,
// so the next peak must leave that much of the budget: plan for budget -
// (arena - peak). Where that still overshoots (the loss grew, or the plan
// did not change), take the overshoot off as well. Where replans leave the
// arena where it was, the layout loses again what the plan gives up, and
// steps of one overshoot use up the replans: synth100k at 70 % planned 2 MB
// lower twice, the arena 2 MB over each time, then searched the floor's
// plan for minutes; at 10 MB lower its layout fits.
std::optional<std::uint64_t> next_planning_budget(std::uint64_t budget, std::uint64_t lowered,
                                                  std::uint64_t arena_bytes,
                                                  std::uint64_t peak_bytes, int stalls) {
  const std::uint64_t over = arena_bytes - std::min(arena_bytes, budget);
  const std::uint64_t lost = arena_bytes - std::min(arena_bytes, peak_bytes);
  std::uint64_t step = over;
  for (int k = 0; k < stalls && step < lowered; ++k) step *= kStalledStepFactor;
  if (step >= lowered || lost >= budget) return std::nullopt;
  return std::min(lowered - step, budget - lost);
}

std::uint64_t smallest_reachable_budget(const ir::Graph& graph, const ir::NodeCosts& costs,
                                        const PlanRequest& request) {
  return lowest_floor(graph, costs, planning_graph(graph, costs), request).budget_bytes();
}

LayoutFitOutcome search_plan_with_layout(const ir::Graph& graph, const ir::NodeCosts& costs,
                                         const PlanRequest& request, int max_replans,
                                         int max_bisections) {
  LayoutFitOutcome out;
  const PlanningGraph order = planning_graph(graph, costs);
  out.outcome = search_plan(graph, costs, order, request);
  out.planning_budget_bytes = request.budget_bytes;
  if (!out.outcome.fits) return out;
  const std::uint64_t budget = request.budget_bytes;
  Plan& plan = out.outcome.plan;
  plan.memory_layout = compute_memory_layout(graph, plan);
  out.first_arena_bytes = plan.memory_layout->arena_bytes;
  out.layout_fits = out.first_arena_bytes <= budget;

  // next_planning_budget() says how much lower each replan plans.
  std::uint64_t lowered = budget;
  std::uint64_t overshot = budget;  // the lowest planning budget whose layout did not fit
  for (int round = 0, stalls = 0; !out.layout_fits && round < max_replans; ++round) {
    const MemoryLayout& m = *plan.memory_layout;
    const std::optional<std::uint64_t> next =
        next_planning_budget(budget, lowered, m.arena_bytes, m.peak_bytes, stalls);
    if (!next) break;
    lowered = *next;
    if (interrupted(request)) break;
    PlanOutcome again = laid_out_plan(graph, costs, order, request, lowered);
    ++out.replans;
    if (!again.fits) break;
    if (again.plan.memory_layout->arena_bytes > budget) overshot = lowered;
    if (again.plan.memory_layout->arena_bytes >= plan.memory_layout->arena_bytes) {
      ++stalls;
      continue;
    }
    stalls = 0;
    out.outcome = std::move(again);
    out.planning_budget_bytes = lowered;
    out.layout_fits = plan.memory_layout->arena_bytes <= budget;
  }
  // Last: the plan for the smallest reachable peak, whose arena is
  // smallest_reachable_budget(), so any budget at or above that gets a plan.
  if (!out.layout_fits && !interrupted(request)) {
    std::optional<PlanOutcome> floor = lowest_floor(graph, costs, order, request).plan;
    ++out.replans;
    if (floor && floor->plan.memory_layout->arena_bytes <= budget) {
      out.planning_budget_bytes = floor->plan.budget_bytes;
      floor->plan.budget_bytes = budget;
      out.outcome = std::move(*floor);
      out.layout_fits = true;
    }
  }
  // Like the heuristic's other second opinions, only where a search is cheap
  // (synth100k: 3 more searches, 2 of them bisections, none faster).
  const bool cheap = graph.tensors().size() <= solvers::GreedySolver::kAlternativesMaxCandidates;
  if (cheap && out.layout_fits && out.replans > 0 && out.planning_budget_bytes < overshot)
    bisect_planning_budget(graph, costs, order, request, overshot, max_bisections, out);
  return out;
}

}  // namespace memplan::planner
