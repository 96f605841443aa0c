#include "solvers/baseline_solvers.h"

#include <gtest/gtest.h>

#include <cmath>

#include "random_problem.h"
#include "solvers/model_eval.h"
#include "solvers/solver_registry.h"
#include "util/errors.h"

namespace memplan::solvers {
namespace {

std::size_t count(const Solution& s, Decision d) {
  return static_cast<std::size_t>(std::count(s.choice.begin(), s.choice.end(), d));
}

TEST(ChenSqrt, KeepsEverySqrtNthActivation) {
  Problem p = test::random_problem(1, 49, 200, 0.5);
  for (auto& c : p.candidates) c.can_recompute = true;
  Solution s = ChenSqrtSolver().solve(p, {});
  // n = 49, stride 7: checkpoints at positions 0, 7, …, 42 -> 7 kept, 42 recomputed.
  EXPECT_EQ(count(s, Decision::kRecompute), 42u);
  EXPECT_EQ(count(s, Decision::kSwap), 0u);
}

TEST(Vdnn, SwapsEverySwappableActivationOneLayerAhead) {
  Problem p = test::random_problem(2, 30, 120, 0.5);
  Solution s = VdnnSolver().solve(p, {});
  for (std::size_t i = 0; i < p.candidates.size(); ++i)
    EXPECT_EQ(s.choice[i], p.candidates[i].can_swap ? Decision::kSwap : Decision::kKeep);
  ASSERT_TRUE(s.prefetch_window.has_value());
  EXPECT_EQ(*s.prefetch_window, 1u);
}

TEST(Atp, CoversTheExcessByEfficiency) {
  Problem p = test::random_problem(3, 40, 160, 0.7);
  Solution s = AtpSolver().solve(p, {});
  std::uint64_t freed = 0;
  for (std::size_t i = 0; i < s.choice.size(); ++i)
    if (s.choice[i] != Decision::kKeep) freed += p.candidates[i].bytes;
  EXPECT_GE(freed, p.baseline_peak() - p.budget_bytes);
  for (std::size_t i = 0; i < s.choice.size(); ++i)
    EXPECT_TRUE(allowed(p.candidates[i], s.choice[i]));
}

TEST(Registry, EveryNameMakesASolverThatReturnsAllowedChoices) {
  Problem p = test::random_problem(4, 12, 60, 0.8);
  for (const auto& name : solver_names()) {
    auto solver = make_solver(name);
    EXPECT_EQ(solver->name(), name);
    Solution s = solver->solve(p, {});
    ASSERT_EQ(s.choice.size(), p.candidates.size()) << name;
    for (std::size_t i = 0; i < s.choice.size(); ++i)
      EXPECT_TRUE(allowed(p.candidates[i], s.choice[i])) << name;
    if (name.rfind("recompute-", 0) == 0) {
      EXPECT_EQ(count(s, Decision::kSwap), 0u) << name;
    }
  }
  EXPECT_THROW(make_solver("nope"), UsageError);
}

}  // namespace
}  // namespace memplan::solvers
