#pragma once
#include "solvers/solver.h"

namespace memplan::solvers {

// Exact: docs/model.md as a MILP solved by COIN-OR Cbc, warm-started from
// options.warm_start. On a time limit or interrupt it returns the best
// assignment found (or the warm start) with the proven bound.
//
// Past `max_binaries` variables it coarsens (solvers/coarsen.h) and says so
// in the solution's note.
class IlpSolver final : public Solver {
 public:
  IlpSolver() = default;
  explicit IlpSolver(std::size_t max_binaries) : max_binaries_(max_binaries) {}
  std::string_view name() const override { return "ilp"; }
  bool time_limited() const override { return true; }
  Solution solve(const Problem& problem, const SolverOptions& options) const override;

 private:
  std::size_t max_binaries_ = 4000;
};

}  // namespace memplan::solvers
