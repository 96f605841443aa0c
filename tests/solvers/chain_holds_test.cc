// Chain holds (problem.h): a recompute of x_i reads x_{i-1}; when x_{i-1}
// is evicted too, the scheduler brings it back for that recompute and holds
// it until its own backward reader. The model must count those bytes.
#include <gtest/gtest.h>

#include <string>

#include "built_graph.h"
#include "solvers/ilp_solver.h"
#include "solvers/model_eval.h"
#include "solvers/problem_builder.h"
#include "solvers/solver_registry.h"

namespace memplan::solvers {
namespace {

// x0 -> x1 -> ... -> x8 (Sigmoid); backward g_{i-1} = Mul(g_i, x_{i-1}),
// so x_{i-1}'s reader b_i runs after x_i's reader b_{i+1}.
using Chain = test::BuiltGraph;
using test::candidate_of;

Chain sigmoid_chain(int l) {
  test::ModelBuilder b;
  b.input("x0", {std::int64_t{4096}});
  for (int i = 1; i <= l; ++i)
    b.node("Sigmoid", {"x" + std::to_string(i - 1)}, {"x" + std::to_string(i)},
           "f" + std::to_string(i));
  test::set_int_attr(b.node("ReduceSum", {"x" + std::to_string(l)}, {"loss"}, "loss_node"),
                     "keepdims", 0);
  b.node("Neg", {"x" + std::to_string(l)}, {"g" + std::to_string(l)}, "b_start");
  for (int i = l; i >= 1; --i)
    b.node("Mul", {"g" + std::to_string(i), "x" + std::to_string(i - 1)},
           {"g" + std::to_string(i - 1)}, "b" + std::to_string(i));
  b.output("loss").output("g0");
  return test::load_built(b, "hold_chain");
}

TEST(ChainHolds, EachRecomputeHoldsTheEvictedInputItReads) {
  Chain c = sigmoid_chain(8);
  Problem p = build_problem(c.graph, c.costs, 0, {});
  int checked = 0;
  for (int i = 2; i <= 7; ++i) {
    const std::size_t reader = candidate_of(p, c.graph, "x" + std::to_string(i));
    const std::size_t input = candidate_of(p, c.graph, "x" + std::to_string(i - 1));
    ASSERT_LT(reader, p.candidates.size()) << i;
    ASSERT_LT(input, p.candidates.size()) << i;
    bool found = false;
    for (const ChainHold& h : p.holds) {
      if (h.reader != reader || h.input != input) continue;
      found = true;
      EXPECT_EQ(h.held.begin, p.candidates[reader].first_backward_use);
      EXPECT_EQ(h.held.end, p.candidates[input].first_backward_use - 1);
      EXPECT_EQ(h.bytes, p.candidates[input].bytes);
      ++checked;
    }
    EXPECT_TRUE(found) << "no hold of x" << i - 1 << " for x" << i;
  }
  EXPECT_EQ(checked, 6);
  // Nothing is held for an input that stays: holds name candidates only.
  for (const ChainHold& h : p.holds) EXPECT_NE(h.reader, h.input);
}

TEST(ChainHolds, TheModelCountsHeldInputsOnlyWhenBothAreEvicted) {
  Chain c = sigmoid_chain(8);
  Problem p = build_problem(c.graph, c.costs, 0, {});
  const std::size_t x4 = candidate_of(p, c.graph, "x4"), x3 = candidate_of(p, c.graph, "x3");
  std::vector<Decision> choice(p.candidates.size(), Decision::kKeep);
  choice[x3] = Decision::kRecompute;
  const auto only_input = freed_per_step(p, choice);
  choice[x4] = Decision::kRecompute;
  const auto both = freed_per_step(p, choice);
  Problem no_holds = p;
  no_holds.holds.clear();
  const auto both_unheld = freed_per_step(no_holds, choice);
  const std::int64_t k4 = p.candidates[x4].first_backward_use;
  const std::int64_t k3 = p.candidates[x3].first_backward_use;
  ASSERT_LT(k4, k3);
  const std::uint64_t b3 = p.candidates[x3].bytes;
  for (std::int64_t s = k4; s < k3; ++s) {
    const auto i = static_cast<std::size_t>(s);
    // x3 is back from x4's recompute on: nothing of it is freed there.
    EXPECT_EQ(both_unheld[i] - both[i], b3) << "step " << s;
    // With x4 kept, x3 stays freed until its own reader.
    EXPECT_EQ(only_input[i], no_holds.candidates[x3].recompute_gap.contains(s) ? b3 : 0u);
  }
  for (std::int64_t s = 0; s < k4; ++s)
    EXPECT_EQ(both[static_cast<std::size_t>(s)], both_unheld[static_cast<std::size_t>(s)]);
}

}  // namespace
}  // namespace memplan::solvers

namespace memplan::solvers {
namespace {

// Two readers hold one input: it is back once, from the earlier reader on.
TEST(ChainHolds, HoldsOfOneTensorCountOnceFromTheEarliestRecomputedReader) {
  Problem p;
  p.step_bytes.assign(30, 0);
  for (int i = 0; i < 3; ++i) {
    Candidate c;
    c.bytes = 100;
    c.can_recompute = true;
    c.recompute_gap = {2, 25};
    p.candidates.push_back(c);
  }
  // Candidate 0 is read by the recomputes of 1 (from step 10) and 2 (14).
  p.holds.push_back({1, 0, {10, 20}, 100, 0});
  p.holds.push_back({2, 0, {14, 20}, 100, 0});
  std::vector<Decision> choice(3, Decision::kRecompute);
  auto freed = freed_per_step(p, choice);
  EXPECT_EQ(freed[9], 300u);
  EXPECT_EQ(freed[10], 200u);  // candidate 0 back
  EXPECT_EQ(freed[16], 200u);  // still once, not twice
  EXPECT_EQ(freed[21], 300u);
  choice[1] = Decision::kKeep;  // only the later reader recomputes
  freed = freed_per_step(p, choice);
  EXPECT_EQ(freed[12], 200u);
  EXPECT_EQ(freed[14], 100u);
  choice[0] = Decision::kKeep;  // the input stays: nothing to hold
  freed = freed_per_step(p, choice);
  EXPECT_EQ(freed[16], 100u);
}

// Problem::holds_cost_time: a hold whose input is recomputed costs the
// input's recompute once more, and no bytes; a swapped input's hold still
// costs bytes. Two candidates must both go (the budget is below either
// alone), so every solver pays the rebuild.
Problem two_chained(bool priced) {
  Problem p;
  p.step_bytes.assign(30, 1000);
  for (int s = 2; s <= 25; ++s) p.step_bytes[static_cast<std::size_t>(s)] = 1200;
  p.budget_bytes = 1000;
  for (int i = 0; i < 2; ++i) {
    Candidate c;
    c.bytes = 100;
    c.can_recompute = true;
    c.recompute_gap = {2, 25};
    c.recompute_seconds = i == 0 ? 3e-3 : 1e-3;
    p.candidates.push_back(c);
  }
  p.holds.push_back({1, 0, {10, 25}, 100, 0});  // 1's recompute reads 0
  p.holds_cost_time = priced;
  return p;
}

TEST(ChainHolds, PricedInTimeTheRebuildIsPaidInsteadOfTheBytes) {
  const std::vector<Decision> both(2, Decision::kRecompute);
  const Problem held = two_chained(false), priced = two_chained(true);
  EXPECT_FALSE(evaluate(held, both).fits);  // 0 is back from step 10: 1100 B
  const ModelEval e = evaluate(priced, both);
  EXPECT_TRUE(e.fits);
  EXPECT_NEAR(e.overhead_seconds, 3e-3 + 1e-3 + 3e-3, 1e-12);
  EXPECT_NEAR(hold_seconds(priced, 0, 1, both), 3e-3, 1e-12);
  const std::vector<Decision> reader_only{Decision::kKeep, Decision::kRecompute};
  EXPECT_EQ(hold_seconds(priced, 0, 1, reader_only), 0.0);
  for (const char* name : {"greedy", "ilp"}) {
    const Solution s = make_solver(name)->solve(priced, {});
    EXPECT_EQ(s.choice, both) << name;
    EXPECT_NEAR(s.objective_seconds, 7e-3, 1e-12) << name;
  }
  EXPECT_EQ(IlpSolver().solve(held, {}).status, SolveStatus::kInfeasible);
}

}  // namespace
}  // namespace memplan::solvers
