#include "solvers/greedy_solver.h"

#include <gtest/gtest.h>

#include "random_problem.h"
#include "solvers/model_eval.h"

namespace memplan::solvers {
namespace {

TEST(GreedySolver, FitsWheneverEvictingEverythingFits) {
  for (unsigned seed = 1; seed <= 20; ++seed) {
    Problem p = test::random_problem(seed, 40, 120, 0.7);
    std::vector<Decision> all(p.candidates.size());
    for (std::size_t i = 0; i < all.size(); ++i)
      all[i] = p.candidates[i].can_recompute ? Decision::kRecompute
               : p.candidates[i].can_swap    ? Decision::kSwap
                                             : Decision::kKeep;
    if (!evaluate(p, all).fits) continue;
    Solution s = GreedySolver().solve(p, {});
    EXPECT_EQ(s.status, "heuristic") << seed;
    EXPECT_TRUE(evaluate(p, s.choice).fits) << seed;
  }
}

TEST(GreedySolver, ChoicesAreAllowedAndObjectiveMatchesTheModel) {
  Problem p = test::random_problem(11, 80, 300, 0.6);
  Solution s = GreedySolver().solve(p, {});
  for (std::size_t i = 0; i < s.choice.size(); ++i)
    EXPECT_TRUE(allowed(p.candidates[i], s.choice[i]));
  EXPECT_DOUBLE_EQ(s.objective_seconds, evaluate(p, s.choice).overhead_seconds);
}

TEST(GreedySolver, RecomputeOnlyConfigNeverSwaps) {
  Problem p = test::random_problem(12, 50, 200, 0.7);
  GreedySolver::Config c;
  c.allow_swap = false;
  Solution s = GreedySolver(c).solve(p, {});
  for (auto d : s.choice) EXPECT_NE(d, Decision::kSwap);
}

TEST(GreedySolver, SimulatorJudgedUndoOnlyAcceptsImprovements) {
  Problem p = test::random_problem(13, 30, 100, 0.8);
  SolverOptions o;
  int calls = 0;
  // A "simulator" that charges one second per evicted tensor: every undo
  // that keeps the plan feasible is an improvement.
  o.simulate = [&](const std::vector<Decision>& d) -> std::optional<double> {
    ++calls;
    return static_cast<double>(
        std::count_if(d.begin(), d.end(), [](Decision x) { return x != Decision::kKeep; }));
  };
  Solution with = GreedySolver().solve(p, o);
  Solution without = GreedySolver().solve(p, {});
  auto evicted = [](const Solution& s) {
    return std::count_if(s.choice.begin(), s.choice.end(),
                         [](Decision x) { return x != Decision::kKeep; });
  };
  EXPECT_GT(calls, 0);
  EXPECT_LE(evicted(with), evicted(without));
  EXPECT_TRUE(evaluate(p, with.choice).fits);
}

}  // namespace
}  // namespace memplan::solvers
