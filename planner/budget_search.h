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
  //
  // A fit (the model met and the schedule under the real budget) after
  // rounds whose schedules went over is refined upward: up to
  // kRefinements rounds halfway towards the lowest model budget whose
  // schedule went over, since a larger model budget evicts less (the
  // caller keeps the fastest fit; the simulated time is not monotone in
  // the model budget).
  std::optional<std::uint64_t> next(std::uint64_t model_budget, bool model_fit,
                                    std::uint64_t over_budget_bytes);

  static constexpr int kRefinements = 2;

 private:
  std::optional<std::uint64_t> refine(std::uint64_t model_budget);

  std::optional<std::uint64_t> fitted_at_, infeasible_at_, over_at_;
  int refinements_ = 0;
};

}  // namespace memplan::planner
