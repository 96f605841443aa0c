#pragma once
// Second opinions: the heuristic's variants (recompute-only greedy, the
// swap-only and recompute-only pipelines), the ILP's (the heuristic's plan
// and the recompute-only ILP's), and `auto`. Each runs solvers through
// run_solver and hands out whichever plan fits and simulates fastest, its
// note saying which. Internal to planner/.
#include <cstddef>
#include <string>
#include <vector>

#include "planner/plan_attempt.h"

namespace memplan::planner::detail {

// `auto` runs checkmate too on graphs of up to this many nodes, where its
// MILP is small (the 26-node mlp: a fraction of a second; at 46 and 64
// nodes 100 branch nodes took 12-20 s and never beat the heuristic) ...
inline constexpr std::size_t kAutoCheckmateMaxNodes = 32;
// ... with at most this many of Cbc's branch-and-bound nodes: a bound on
// work, so that auto hands out the same plan on a slow machine as on a
// fast one (docs/model.md) ...
inline constexpr int kAutoCheckmateBranchNodes = 100;
// ... and this many seconds, a guard: the node limit is what bounds it.
inline constexpr double kAutoCheckmateSeconds = 30;

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

// `checkmate` (planner/checkmate_plan.h), warm-started from the
// recompute-only greedy's plan; where the MILP finds no schedule, the
// baseline's plan (which does not fit), its note saying why.
// max_branch_nodes: Cbc's, 0 for no limit.
Attempt run_checkmate(const ir::Graph& g, const ir::NodeCosts& costs, const PlanRequest& req,
                      const solvers::SolverOptions& so, int max_branch_nodes = 0);

// `auto`: the heuristic, the ILP warm-started from it, the recompute-only
// ILP, and on graphs of up to kAutoCheckmateMaxNodes nodes checkmate;
// `used` names the winner.
Attempt run_auto(const ir::Graph& g, const ir::NodeCosts& costs, const PlanRequest& req,
                 const solvers::SolverOptions& so, std::string& used);

}  // namespace memplan::planner::detail
