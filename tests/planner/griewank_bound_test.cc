// Recompute-only plans on a uniform chain can never beat Griewank's
// binomial bound (Griewank & Walther, "revolve"): reversing l steps with
// memory for s chain states needs at least p(l, s) forward evaluations,
// p(l, s) = r·l − C(s+r, s+1) with r minimal such that C(s+r, s) ≥ l,
// i.e. at least p(l, s) − l recomputations. A plan below it would mean our
// memory accounting lets more than s states live at once.
#include <gtest/gtest.h>

#include "ir/device_presets.h"
#include "ir/node_costs.h"
#include "ir/onnx_loader.h"
#include "planner/plan_search.h"
#include "support/model_builder.h"

namespace memplan::planner {
namespace {

std::uint64_t binom(std::uint64_t n, std::uint64_t k) {
  std::uint64_t r = 1;
  for (std::uint64_t i = 1; i <= k; ++i) r = r * (n - k + i) / i;
  return r;
}

std::int64_t griewank_p(std::int64_t l, std::int64_t s) {
  std::int64_t r = 0;
  while (static_cast<std::int64_t>(binom(static_cast<std::uint64_t>(s + r), static_cast<std::uint64_t>(s))) < l) ++r;
  return r * l - static_cast<std::int64_t>(binom(static_cast<std::uint64_t>(s + r), static_cast<std::uint64_t>(s + 1)));
}

TEST(GriewankBound, FormulaMatchesKnownValues) {
  // s = 1: r = l - 1 (C(1+r, 1) = 1 + r >= l), p = (l-1)l - C(l, 2) = l(l-1)/2.
  EXPECT_EQ(griewank_p(4, 1), 6);
  // l = 10, s = 3: r = 2 since C(5,3) = 10 >= 10; p = 20 - C(5,4) = 15.
  EXPECT_EQ(griewank_p(10, 3), 15);
  // Memory for every state: r = 1 (C(7, 6) = 7 >= 6), p = 6 - C(7, 7) = 5 <= l:
  // no recomputation is forced.
  EXPECT_EQ(griewank_p(6, 6), 5);
}

// x0 -> x1 -> … -> xl (Sigmoid, n floats each), loss = ReduceSum(xl);
// backward: g_l = Neg(x_l), g_{i-1} = Mul(g_i, x_{i-1}) for i = l … 1.
struct Chain {
  ir::Graph graph;
  ir::NodeCosts costs;
  std::uint64_t state_bytes = 0;
};

Chain uniform_chain(int l, std::int64_t n) {
  test::ModelBuilder b;
  b.input("x0", {n});
  for (int i = 1; i <= l; ++i)
    b.node("Sigmoid", {"x" + std::to_string(i - 1)}, {"x" + std::to_string(i)}, "f" + std::to_string(i));
  test::set_int_attr(b.node("ReduceSum", {"x" + std::to_string(l)}, {"loss"}, "loss_node"), "keepdims", 0);
  b.node("Neg", {"x" + std::to_string(l)}, {"g" + std::to_string(l)}, "b_start");
  for (int i = l; i >= 1; --i)
    b.node("Mul", {"g" + std::to_string(i), "x" + std::to_string(i - 1)}, {"g" + std::to_string(i - 1)},
           "b" + std::to_string(i));
  b.output("loss").output("g0");
  Chain c;
  c.graph = ir::load_model(b.write("chain"), {}).graph;
  std::vector<std::string> warnings;
  c.costs = ir::make_node_costs(c.graph, ir::device_preset("a100-40gb"), {}, "roofline", warnings);
  c.state_bytes = static_cast<std::uint64_t>(n) * 4;
  return c;
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
    req.allow_swap = false;
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
                         ::testing::Values(Case{12, 3}, Case{12, 4}, Case{16, 4}, Case{16, 6}, Case{24, 5},
                                           Case{24, 8}));

}  // namespace
}  // namespace memplan::planner
