#pragma once
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "solvers/solver.h"

namespace memplan::solvers {

// greedy, ilp, and the baselines: chen-sqrt, recompute-greedy,
// recompute-ilp, vdnn, atp. ("auto", "dtr" and "checkmate" are the
// planner's: auto runs greedy then ilp; dtr evicts during simulation;
// checkmate schedules every run of a small graph exactly.)
std::vector<std::string> solver_names();
// Throws UsageError listing the names for an unknown one.
std::unique_ptr<Solver> make_solver(std::string_view name);

}  // namespace memplan::solvers
