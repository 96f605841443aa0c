#include "solvers/evictions.h"

#include <gtest/gtest.h>

#include "random_problem.h"
#include "solvers/baseline_solvers.h"
#include "solvers/model_eval.h"

namespace memplan::solvers {
namespace {

TEST(Evictions, NamedSetsPermitWhatTheySay) {
  EXPECT_EQ(Evictions{}, Evictions::both());
  EXPECT_TRUE(Evictions::both().permits_both());
  EXPECT_FALSE(Evictions::swap_only().permits_both());
  EXPECT_FALSE(Evictions::recompute_only().permits_both());
  for (Evictions e : {Evictions::both(), Evictions::swap_only(), Evictions::recompute_only()}) {
    EXPECT_TRUE(e.permits(Decision::kKeep));
    EXPECT_EQ(e.permits(Decision::kSwap), e.swap);
    EXPECT_EQ(e.permits(Decision::kRecompute), e.recompute);
  }
  EXPECT_FALSE(Evictions::swap_only().permits(Decision::kRecompute));
  EXPECT_FALSE(Evictions::recompute_only().permits(Decision::kSwap));
}

// Options go only where the problem had them: nothing is added back.
TEST(Evictions, RestrictingTakesOffTheOptionsNotPermitted) {
  const Problem p = test::random_problem(21, 60, 200, 0.7);
  for (Evictions e : {Evictions::both(), Evictions::swap_only(), Evictions::recompute_only()}) {
    Problem q = p;
    restrict_evictions(q, e);
    ASSERT_EQ(q.candidates.size(), p.candidates.size());
    for (std::size_t i = 0; i < p.candidates.size(); ++i) {
      EXPECT_EQ(q.candidates[i].can_swap, p.candidates[i].can_swap && e.swap) << i;
      EXPECT_EQ(q.candidates[i].can_recompute, p.candidates[i].can_recompute && e.recompute) << i;
    }
  }
}

TEST(Evictions, AWarmStartKeepsOnlyTheChoicesStillAllowed) {
  Problem p = test::random_problem(22, 60, 200, 0.7);
  std::vector<Decision> start(p.candidates.size());
  for (std::size_t i = 0; i < start.size(); ++i)
    start[i] = static_cast<Decision>(i % 3);  // keep, swap, recompute in turn
  std::vector<Decision> warm = start;
  restrict_evictions(p, Evictions::swap_only(), &warm);
  for (std::size_t i = 0; i < warm.size(); ++i) {
    EXPECT_TRUE(allowed(p.candidates[i], warm[i])) << i;
    EXPECT_EQ(warm[i], allowed(p.candidates[i], start[i]) ? start[i] : Decision::kKeep) << i;
  }
  // Not one entry per candidate: not a warm start of this problem, left alone.
  std::vector<Decision> other(3, Decision::kRecompute);
  restrict_evictions(p, Evictions::swap_only(), &other);
  EXPECT_EQ(other, std::vector<Decision>(3, Decision::kRecompute));
}

// The restricted baseline is the inner solver on the restricted problem.
TEST(Evictions, ARestrictedSolverSolvesTheRestrictedProblem) {
  const Problem p = test::random_problem(23, 40, 150, 0.7);
  for (Evictions e : {Evictions::swap_only(), Evictions::recompute_only()}) {
    const RestrictedSolver restricted(std::make_unique<AtpSolver>(), e, "restricted-atp");
    EXPECT_EQ(restricted.name(), "restricted-atp");
    Problem q = p;
    restrict_evictions(q, e);
    const Solution s = restricted.solve(p, {});
    EXPECT_EQ(s.choice, AtpSolver().solve(q, {}).choice);
    for (Decision d : s.choice) EXPECT_TRUE(e.permits(d));
  }
}

}  // namespace
}  // namespace memplan::solvers
