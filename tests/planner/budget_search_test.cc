// The tightening rounds' model budgets (planner/budget_search.h).
#include "planner/budget_search.h"

#include <gtest/gtest.h>

namespace memplan::planner {
namespace {

constexpr std::uint64_t kMiB = 1 << 20;

TEST(BudgetSearch, AScheduleOverBudgetAsksTheModelForThatMuchLessAndAnEighth) {
  BudgetSearch s;
  const auto next = s.next(1000 * kMiB, true, 80 * kMiB);
  ASSERT_TRUE(next.has_value());
  EXPECT_EQ(*next, 1000 * kMiB - 90 * kMiB - 1);
}

TEST(BudgetSearch, NoFitGoesHalfwayBackToTheLastFittedBudget) {
  BudgetSearch s;
  auto next = s.next(1000 * kMiB, true, 300 * kMiB);  // to 662.5 MiB - 1
  ASSERT_TRUE(next.has_value());
  const std::uint64_t low = *next;
  next = s.next(low, false, 0);
  ASSERT_TRUE(next.has_value());
  EXPECT_EQ(*next, low + (1000 * kMiB - low) / 2);
  // Fitted again but still over: the cut never lands at or below the
  // budget already found infeasible.
  const std::uint64_t mid = *next;
  next = s.next(mid, true, 300 * kMiB);
  ASSERT_TRUE(next.has_value());
  EXPECT_GT(*next, low);
  EXPECT_LT(*next, mid);
  EXPECT_EQ(*next, low + (mid - low) / 2);
}

TEST(BudgetSearch, StopsWithoutAFittedBudgetOrWhenTheStepIsTiny) {
  BudgetSearch first;
  EXPECT_FALSE(first.next(1000 * kMiB, false, 0).has_value());  // nothing fitted yet
  BudgetSearch s;
  EXPECT_FALSE(s.next(1000 * kMiB, true, 2000 * kMiB).has_value());  // cut past zero
  // Within a thousandth of the budget just tried: nothing left to learn.
  BudgetSearch close;
  EXPECT_FALSE(close.next(1000 * kMiB, true, 512 * 1024).has_value());
  // Halving toward the fitted budget ends the same way.
  BudgetSearch halving;
  std::uint64_t budget = 1000 * kMiB;
  auto next = halving.next(budget, true, 100 * kMiB);
  int rounds = 0;
  for (; next && rounds < 64; ++rounds) next = halving.next(*next, false, 0);
  EXPECT_GT(rounds, 3);
  EXPECT_LT(rounds, 20);
}

// A fit after a schedule went over: a larger model budget evicts less, so
// up to kRefinements rounds try halfway back towards the one that went over.
TEST(BudgetSearch, AFitAfterAnOverrunIsRefinedUpwardAFewTimes) {
  BudgetSearch s;
  auto next = s.next(1000 * kMiB, true, 100 * kMiB);  // over: down to 887.5 MiB - 1
  ASSERT_TRUE(next.has_value());
  std::uint64_t fit = *next;
  int refinements = 0;
  for (; refinements < 8; ++refinements) {
    next = s.next(fit, true, 0);  // fits
    if (!next) break;
    EXPECT_EQ(*next, fit + (1000 * kMiB - fit) / 2);
    fit = *next;
  }
  EXPECT_EQ(refinements, BudgetSearch::kRefinements);
  // A refinement that goes over again lowers the ceiling it refines towards.
  BudgetSearch t;
  next = t.next(1000 * kMiB, true, 200 * kMiB);
  const std::uint64_t low = *next;
  next = t.next(low, true, 0);
  ASSERT_TRUE(next.has_value());
  const std::uint64_t mid = *next;
  next = t.next(mid, true, 10 * kMiB);  // over by a little: down again
  ASSERT_TRUE(next.has_value());
  EXPECT_LT(*next, mid);
  next = t.next(*next, true, 0);  // fits: refined towards mid, not 1000 MiB
  ASSERT_TRUE(next.has_value());
  EXPECT_LT(*next, mid);
  // A first-round fit has nothing to refine towards.
  BudgetSearch first;
  EXPECT_FALSE(first.next(1000 * kMiB, true, 0).has_value());
}

}  // namespace
}  // namespace memplan::planner
