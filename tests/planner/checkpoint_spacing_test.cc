// The checkpoint-spacing search on a uniform 32-step chain, recompute only.
#include "planner/checkpoint_spacing.h"

#include <gtest/gtest.h>

#include <cmath>

#include "planner/plan_search.h"
#include "solvers/problem_builder.h"
#include "uniform_chain.h"

namespace memplan::planner {
namespace {

constexpr std::int64_t kFloats = 1 << 12;

struct Search {
  test_util::Chain chain = test_util::uniform_chain(32, kFloats);
  solvers::Problem problem;
  int priced = 0;

  std::optional<SpacedPlan> at(int states, const SpacingOptions& o = {}) {
    solvers::ProblemOptions po;
    po.evictions = solvers::Evictions::recompute_only();
    const std::uint64_t budget = static_cast<std::uint64_t>(states) * chain.state_bytes + 64;
    problem = solvers::build_problem(chain.graph, chain.costs, budget, po);
    auto seconds = [this](const ScheduleResult& s) {
      ++priced;
      int remakes = 0;
      for (const Step& st : s.schedule) remakes += st.op == StepOp::kRecompute ? 1 : 0;
      return static_cast<double>(remakes);
    };
    return fit_by_checkpoint_spacing(chain.graph, chain.costs, problem, budget, seconds, o);
  }
};

int kept(const SpacedPlan& p) {
  int k = 0;
  for (Decision d : p.plan.choice) k += d == Decision::kKeep ? 1 : 0;
  return k;
}

TEST(CheckpointSpacing, FindsTheSpacingThatFitsWithTheFewestRemakes) {
  Search s;
  const auto best = s.at(10);
  ASSERT_TRUE(best.has_value());
  EXPECT_TRUE(best->plan.schedule.fits);
  EXPECT_LE(best->plan.schedule.peak_bytes, 10 * s.chain.state_bytes + 64);
  // Spacings searched: ⌊√C/2⌋ … 2√C + 1; the kept ones are one in k.
  const double root = std::sqrt(static_cast<double>(s.problem.candidates.size()));
  EXPECT_GE(best->spacing, 2u);
  EXPECT_LE(static_cast<double>(best->spacing), 2 * root + 1);
  EXPECT_EQ(static_cast<std::size_t>(kept(*best)), s.problem.candidates.size() / best->spacing);
  // Measured with `memplan simulate --decisions`: spacing 5 fits with 29
  // remakes, 4 and below do not fit, 6 takes 30.
  EXPECT_LE(best->seconds, 29);
  EXPECT_GE(s.priced, 2);
}

TEST(CheckpointSpacing, NothingBelowTheFloorOrPastTheCandidateLimit) {
  Search s;
  EXPECT_FALSE(s.at(3).has_value());  // x0, a gradient pair and one state: nothing fits
  SpacingOptions few;
  few.max_candidates = 8;
  EXPECT_FALSE(s.at(10, few).has_value());
  EXPECT_EQ(s.priced, 0);
}

}  // namespace
}  // namespace memplan::planner
