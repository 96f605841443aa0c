#pragma once
// The peers memplan is measured against, as solvers of the same problem.
#include <memory>

#include "solvers/evictions.h"
#include "solvers/solver.h"

namespace memplan::solvers {

// Chen et al. 2016, sqrt(n) checkpointing: keep every ceil(sqrt(n))-th
// activation in forward order, recompute the others. Ignores the budget.
class ChenSqrtSolver final : public Solver {
 public:
  std::string_view name() const override { return "chen-sqrt"; }
  Solution solve(const Problem& problem, const SolverOptions& options) const override;
};

// vDNN-style swap-only: offload every activation that can be, prefetch one
// step (one node of the schedule) ahead, our reading of vDNN's "one layer
// ahead" on graphs whose layers are many nodes. Ignores the budget.
class VdnnSolver final : public Solver {
 public:
  std::string_view name() const override { return "vdnn"; }
  Solution solve(const Problem& problem, const SolverOptions& options) const override;
};

// ATP's rule: per tensor, swap when size/swap-time beats size/recompute-time
// (else recompute); take tensors by that efficiency until their bytes cover
// the baseline peak's excess over the budget.
class AtpSolver final : public Solver {
 public:
  std::string_view name() const override { return "atp"; }
  Solution solve(const Problem& problem, const SolverOptions& options) const override;
};

// Another solver on the problem with some options switched off: PyTorch's
// activation_memory_budget is the recompute-only knapsack, greedy or exact.
class RestrictedSolver final : public Solver {
 public:
  RestrictedSolver(std::unique_ptr<Solver> inner, Evictions evictions, std::string name)
      : inner_(std::move(inner)), evictions_(evictions), name_(std::move(name)) {}
  std::string_view name() const override { return name_; }
  bool time_limited() const override { return inner_->time_limited(); }
  Solution solve(const Problem& problem, const SolverOptions& options) const override;

 private:
  std::unique_ptr<Solver> inner_;
  Evictions evictions_;
  std::string name_;
};

}  // namespace memplan::solvers
