#include "solvers/greedy_state.h"

#include <gtest/gtest.h>

#include <random>

#include "random_problem.h"
#include "solvers/model_eval.h"

namespace memplan::solvers {
namespace {

// The state keeps the objective and the excess by running sums; after any
// sequence of moves they must agree with a fresh evaluation of the choice.
void expect_state_matches_evaluate(Problem p, unsigned seed) {
  GreedyState st(p);
  std::mt19937 rng(seed);
  for (int move = 0; move < 600; ++move) {
    const std::size_t i = rng() % p.candidates.size();
    const Decision d = static_cast<Decision>(rng() % 3);
    if (!allowed(p.candidates[i], d)) continue;
    st.set(i, d);
    const ModelEval e = evaluate(p, st.choice());
    ASSERT_NEAR(st.objective(), e.overhead_seconds, 1e-9) << "move " << move;
    ASSERT_EQ(st.fits(), e.fits) << "move " << move;
  }
}

TEST(GreedyState, ObjectiveAndFitMatchEvaluateAfterRandomMoves) {
  for (unsigned seed = 1; seed <= 4; ++seed)
    expect_state_matches_evaluate(test::random_problem(seed, 60, 120, 0.6), seed);
}

TEST(GreedyState, ObjectiveMatchesWhenHoldsCostTime) {
  Problem p = test::random_problem(9, 60, 120, 0.6);
  ASSERT_FALSE(p.holds.empty());
  p.holds_cost_time = true;
  expect_state_matches_evaluate(p, 9);
}

TEST(GreedyState, MarginalIsTheObjectiveChangeOfTheMove) {
  const Problem p = test::random_problem(3, 60, 120, 0.6);
  GreedyState st(p);
  std::mt19937 rng(3);
  for (int move = 0; move < 300; ++move) {
    const std::size_t i = rng() % p.candidates.size();
    const Decision d = static_cast<Decision>(rng() % 3);
    if (!allowed(p.candidates[i], d)) continue;
    const double before = st.objective(), predicted = st.marginal(i, d);
    st.set(i, d);
    ASSERT_NEAR(st.objective() - before, predicted, 1e-9) << "move " << move;
  }
}

}  // namespace
}  // namespace memplan::solvers
