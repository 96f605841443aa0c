// Recompute-only plans on a uniform chain can never beat Griewank's
// binomial bound (Griewank & Walther, "revolve"): reversing l steps with
// memory for s chain states needs at least p(l, s) forward evaluations,
// p(l, s) = r·l − C(s+r, s+1) with r minimal such that C(s+r, s) ≥ l,
// i.e. at least p(l, s) − l recomputations. A plan below it would mean our
// memory accounting lets more than s states live at once.
#include <gtest/gtest.h>

#include "planner/plan_search.h"
#include "uniform_chain.h"

namespace memplan::planner {
namespace {

using test_util::Chain;
using test_util::griewank_p;
using test_util::uniform_chain;

TEST(GriewankBound, FormulaMatchesKnownValues) {
  // s = 1: r = l - 1 (C(1+r, 1) = 1 + r >= l), p = (l-1)l - C(l, 2) = l(l-1)/2.
  EXPECT_EQ(griewank_p(4, 1), 6);
  // l = 10, s = 3: r = 2 since C(5,3) = 10 >= 10; p = 20 - C(5,4) = 15.
  EXPECT_EQ(griewank_p(10, 3), 15);
  // Memory for every state: r = 1 (C(7, 6) = 7 >= 6), p = 6 - C(7, 7) = 5 <= l:
  // no recomputation is forced.
  EXPECT_EQ(griewank_p(6, 6), 5);
}

struct Case {
  int l;
  int s;
};

class GriewankCase : public ::testing::TestWithParam<Case> {};

TEST_P(GriewankCase, RecomputeOnlyPlansRespectTheBound) {
  const auto [l, s] = GetParam();
  Chain c = uniform_chain(l, 1 << 16);
  // Budget: x0, the loss, two gradients in flight, and s chain states.
  const std::uint64_t b = c.state_bytes;
  const std::uint64_t budget = b + 4 + 2 * b + static_cast<std::uint64_t>(s) * b;
  const std::int64_t bound = griewank_p(l, s) - l;
  int planned = 0;
  for (const char* solver : {"recompute-greedy", "recompute-ilp", "dtr"}) {
    PlanRequest req;
    req.budget_bytes = budget;
    req.solver = solver;
    req.evictions = solvers::Evictions::recompute_only();
    req.time_limit_seconds = 10;
    PlanOutcome out = search_plan(c.graph, c.costs, req);
    if (!out.fits) continue;  // the bound speaks of plans that fit
    ++planned;
    std::int64_t recomputes = 0;
    for (const Step& st : out.plan.schedule) recomputes += st.op == StepOp::kRecompute ? 1 : 0;
    EXPECT_GE(recomputes, bound) << solver << " l=" << l << " s=" << s;
    RecordProperty(std::string(solver) + "_recomputes", static_cast<int>(recomputes));
  }
  EXPECT_GT(planned, 0) << "no solver fit l=" << l << " s=" << s;
}

INSTANTIATE_TEST_SUITE_P(Chains, GriewankCase,
                         ::testing::Values(Case{12, 3}, Case{12, 4}, Case{16, 4}, Case{16, 6},
                                           Case{24, 5}, Case{24, 8}));

}  // namespace
}  // namespace memplan::planner
