#pragma once
// The model budgets of plan_search's tightening rounds: where a plan fits
// the model but its schedule needs more memory than the model counted, the
// solver is asked again with a smaller model budget.
#include <cstdint>
#include <optional>

namespace memplan::planner {

class BudgetSearch {
 public:
  // The model budget of the next round after one at `model_budget`, or none
  // to stop. `model_fit`: the solver met the model at that budget;
  // `over_budget_bytes`: by how much its schedule missed the real budget.
  //
  // A schedule over the budget asks the model for that much less (and an
  // eighth more). A budget the solver finds no fit for sends the search
  // halfway back to the last one it fitted: the first cut can overshoot the
  // narrow band between what the schedule needs and what the model can
  // still meet (gpt2_small a100-40gb 40 %: 314 MB over, then no fit 353 MB
  // lower). Stops within a thousandth of a budget already tried.
  std::optional<std::uint64_t> next(std::uint64_t model_budget, bool model_fit,
                                    std::uint64_t over_budget_bytes);

 private:
  std::optional<std::uint64_t> fitted_at_, infeasible_at_;
};

}  // namespace memplan::planner
