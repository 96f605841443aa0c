#pragma once
// Second opinions: the heuristic's variants (recompute-only greedy, the
// swap-only and recompute-only pipelines), the ILP's (the heuristic's plan
// and the recompute-only ILP's), and `auto`. Each runs solvers through
// run_solver and hands out whichever plan fits and simulates fastest, its
// note saying which. Internal to planner/.
#include <string>
#include <vector>

#include "planner/plan_attempt.h"

namespace memplan::planner::detail {

// The heuristic's plan: the greedy's or one of its variants', the fastest
// that fits.
Attempt run_heuristic(const ir::Graph& g, const ir::NodeCosts& costs, const PlanRequest& req,
                      const solvers::SolverOptions& so);

// `ilp`'s plan, or one of `others` (solver names, "greedy" for
// run_heuristic) where that fits and simulates faster. Returns the name of
// the solver whose plan it is.
std::string keep_the_fastest_plan(const ir::Graph& g, const ir::NodeCosts& costs,
                                  const PlanRequest& req, const solvers::SolverOptions& so,
                                  Attempt& ilp, std::vector<std::string> others);

// `auto`: the heuristic, the ILP warm-started from it, the recompute-only
// ILP; `used` names the winner.
Attempt run_auto(const ir::Graph& g, const ir::NodeCosts& costs, const PlanRequest& req,
                 const solvers::SolverOptions& so, std::string& used);

}  // namespace memplan::planner::detail
