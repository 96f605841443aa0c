#include "planner/budget_search.h"

#include <algorithm>

namespace memplan::planner {

std::optional<std::uint64_t> BudgetSearch::next(std::uint64_t model_budget, bool model_fit,
                                                std::uint64_t over_budget_bytes) {
  std::uint64_t next = 0, tried = model_budget;
  if (!model_fit) {
    infeasible_at_ = model_budget;
    if (!fitted_at_) return std::nullopt;
    tried = *fitted_at_;
    next = model_budget + (*fitted_at_ - model_budget) / 2;
  } else if (over_budget_bytes == 0) {
    return refine(model_budget);
  } else {
    fitted_at_ = model_budget;
    over_at_ = over_at_ ? std::min(*over_at_, model_budget) : model_budget;
    const std::uint64_t cut = over_budget_bytes + over_budget_bytes / 8 + 1;
    if (cut >= model_budget) return std::nullopt;
    next = model_budget - cut;
    if (infeasible_at_ && next <= *infeasible_at_)
      next = *infeasible_at_ + (model_budget - *infeasible_at_) / 2;
  }
  if (next >= tried || tried - next < model_budget / 1000) return std::nullopt;
  return next;
}

std::optional<std::uint64_t> BudgetSearch::refine(std::uint64_t model_budget) {
  if (!over_at_ || *over_at_ <= model_budget || refinements_ >= kRefinements) return std::nullopt;
  const std::uint64_t next = model_budget + (*over_at_ - model_budget) / 2;
  if (next - model_budget < model_budget / 1000) return std::nullopt;
  ++refinements_;
  return next;
}

}  // namespace memplan::planner
