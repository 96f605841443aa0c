#pragma once
#include "solvers/solver.h"

namespace memplan::solvers {

// Exact: docs/model.md as a MILP solved by COIN-OR Cbc, warm-started from
// options.warm_start. On a time limit or interrupt it returns the best
// assignment found (or the warm start) with the proven bound.
class IlpSolver final : public Solver {
 public:
  std::string_view name() const override { return "ilp"; }
  Solution solve(const Problem& problem, const SolverOptions& options) const override;
};

}  // namespace memplan::solvers
