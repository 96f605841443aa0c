// The over-budget repair splits held reloads; which ones it splits first
// decides what the schedule costs (planner/segment_split.h, SplitOrder).
#include <gtest/gtest.h>

#include <algorithm>

#include "scheduler_test_util.h"

namespace memplan::planner {
namespace {

using sched_test::decide;
using sched_test::expect_valid;
using sched_test::unit_costs;

// Forward: a = Concat(x, x) (64 B) and b = Relu(x) (32 B). The backward
// reads a at bw0 and bw5 and b at bw1 and bw6, with a 128-B temporary
// between: both are held across that peak unless split.
ir::Graph two_held_graph() {
  test::ModelBuilder b;
  b.input("x", {"batch", std::int64_t{4}});
  test::set_int_attr(b.node("Concat", {"x", "x"}, {"a"}, "f0"), "axis", 1);
  b.node("Relu", {"x"}, {"b"}, "f1");
  test::set_int_attr(b.node("Concat", {"a", "b"}, {"c"}, "f2"), "axis", 1);
  test::set_int_attr(b.node("ReduceSum", {"c"}, {"loss"}, "f3"), "keepdims", 0);
  b.node("Neg", {"a"}, {"ga"}, "bw0");
  b.node("Neg", {"b"}, {"gb"}, "bw1");
  test::set_int_attr(b.node("Concat", {"x", "x", "x", "x"}, {"big"}, "bw2"), "axis", 1);
  test::set_int_attr(b.node("ReduceSum", {"big"}, {"s"}, "bw3"), "keepdims", 0);
  b.node("Neg", {"s"}, {"t"}, "bw4");
  b.node("Mul", {"a", "ga"}, {"ha"}, "bw5");
  b.node("Mul", {"b", "gb"}, {"hb"}, "bw6");
  b.output("loss").output("ha").output("hb").output("t");
  return sched_test::load(b, "sched_two_held");
}

std::size_t count(const ScheduleResult& r, StepOp op, std::uint32_t id) {
  return static_cast<std::size_t>(
      std::count(r.schedule.begin(), r.schedule.end(), Step{op, id}));
}

TEST(SplitOrder, SplitsTheCheapReloadBeforeRerunningAnExpensiveProducer) {
  ir::Graph g = two_held_graph();
  ir::NodeCosts costs = unit_costs(g);
  const ir::NodeId f0 = *g.find_node("f0");
  costs.seconds[f0] = 10.0;  // remaking a costs 10 s; b's copy about nothing
  const ir::TensorId b = *g.find_tensor("b");
  const auto decisions = decide(g, {{"a", Decision::kRecompute}, {"b", Decision::kSwap}});

  ScheduleResult held = make_schedule(g, costs, decisions, {});
  ASSERT_EQ(count(held, StepOp::kRecompute, f0), 1u);
  ASSERT_EQ(count(held, StepOp::kSwapIn, b), 1u);

  // 32 B less: splitting either a (64 B) or b (32 B) fits. Largest first
  // would remake a again (10 s); the cheapest bytes are b's copy.
  ScheduleOptions o;
  o.budget_bytes = held.peak_bytes - 32;
  ScheduleResult r = make_schedule(g, costs, decisions, o);
  EXPECT_TRUE(r.fits) << r.diagnosis;
  EXPECT_EQ(count(r, StepOp::kRecompute, f0), 1u);
  EXPECT_EQ(count(r, StepOp::kSwapIn, b), 2u);
  EXPECT_LT(r.estimated_seconds, held.estimated_seconds + 1.0);
  expect_valid(g, costs, r, o.budget_bytes);
}

TEST(SplitOrder, KeepsTheLargestFirstWhereOnlyItFits) {
  ir::Graph g = two_held_graph();
  ir::NodeCosts costs = unit_costs(g);
  const ir::NodeId f0 = *g.find_node("f0");
  costs.seconds[f0] = 10.0;
  const auto decisions = decide(g, {{"a", Decision::kRecompute}, {"b", Decision::kSwap}});
  const std::uint64_t peak = make_schedule(g, costs, decisions, {}).peak_bytes;

  // 64 B less: b's 32 B cannot do it alone, so a is split whatever the
  // order, and the schedule still fits.
  ScheduleOptions o;
  o.budget_bytes = peak - 64;
  ScheduleResult r = make_schedule(g, costs, decisions, o);
  EXPECT_TRUE(r.fits) << r.diagnosis;
  EXPECT_EQ(count(r, StepOp::kRecompute, f0), 2u);
  expect_valid(g, costs, r, o.budget_bytes);
}

}  // namespace
}  // namespace memplan::planner
