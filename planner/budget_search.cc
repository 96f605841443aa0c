#include "planner/budget_search.h"

namespace memplan::planner {

std::optional<std::uint64_t> BudgetSearch::next(std::uint64_t model_budget, bool model_fit,
                                                std::uint64_t over_budget_bytes) {
  std::uint64_t next = 0, tried = model_budget;
  if (!model_fit) {
    infeasible_at_ = model_budget;
    if (!fitted_at_) return std::nullopt;
    tried = *fitted_at_;
    next = model_budget + (*fitted_at_ - model_budget) / 2;
  } else {
    fitted_at_ = model_budget;
    const std::uint64_t cut = over_budget_bytes + over_budget_bytes / 8 + 1;
    if (cut >= model_budget) return std::nullopt;
    next = model_budget - cut;
    if (infeasible_at_ && next <= *infeasible_at_)
      next = *infeasible_at_ + (model_budget - *infeasible_at_) / 2;
  }
  if (next >= tried || tried - next < model_budget / 1000) return std::nullopt;
  return next;
}

}  // namespace memplan::planner
