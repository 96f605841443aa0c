#include "planner/reachable_floor.h"

#include <algorithm>

#include "planner/feasibility_fallback.h"
#include "planner/plan_search.h"
#include "planner/planning_order.h"
#include "planner/scheduler.h"
#include "solvers/problem_builder.h"

namespace memplan::planner {
namespace {

std::uint64_t lowest_evict_all_peak(const PlanningGraph& pg, solvers::Evictions evictions,
                                    bool offload_state) {
  const ir::Graph& g = pg.graph;
  const ir::NodeCosts& costs = pg.costs;
  solvers::ProblemOptions po;
  po.evictions = evictions;
  po.offload_state = offload_state;
  solvers::Problem p = solvers::build_problem(g, costs, 0, po);
  // Evict every candidate, preferring recompute, then preferring swap (on
  // residual chains swapping reaches lower: recomputing rebuilds the chain),
  // and swapping with vDNN's one-step prefetch; the lowest scheduled peak.
  std::uint64_t best = UINT64_MAX;
  for (const EvictAll& v : evict_all_variants())
    best = std::min(best, schedule_for(g, costs, decisions_by_tensor(g, p, evict_all_choice(p, v)),
                                       0, v.prefetch_window)
                              .peak_bytes);
  return best;
}

}  // namespace

std::uint64_t smallest_reachable_peak(const ir::Graph& graph, const ir::NodeCosts& graph_costs,
                                      solvers::Evictions evictions, bool offload_state,
                                      bool state_on_host) {
  const PlanningGraph pg = planning_graph(graph, graph_costs);
  std::uint64_t best = lowest_evict_all_peak(pg, evictions, offload_state);
  if (!state_on_host || !offload_state || !evictions.swap) return best;
  if (const auto host = with_state_on_host(pg))
    best = std::min(best, lowest_evict_all_peak(*host, evictions, offload_state));
  return best;
}

}  // namespace memplan::planner
