// A recompute makes every output of its node: a small sibling due later is
// held from that recompute rather than its node run again (reload_plan.h,
// kSiblingHoldRatio); siblings of like size are still remade where due.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "planner/scheduler.h"
#include "scheduler_test_util.h"

namespace memplan::planner {
namespace {

using sched_test::decide;
using sched_test::text;
using sched_test::unit_costs;

// float32, batch 2, x [2,64] (512 B). The forward node f1 makes a large
// output y and, as `small` says, two statistics of 8 B (LayerNormalization)
// or one more output of y's size (Split into halves, then 256 B each). bw1
// reads y; bw3, two turns later, reads the others.
ir::Graph two_turn_graph(bool small) {
  test::ModelBuilder b;
  b.input("x", {"batch", std::int64_t{64}});
  b.input("scale", {std::int64_t{64}});
  b.input("bias", {std::int64_t{64}});
  b.node("Relu", {"x"}, {"a"}, "f0");
  if (small) {
    b.node("LayerNormalization", {"a", "scale", "bias"}, {"y", "mean", "inv"}, "f1");
  } else {
    test::set_int_attr(b.node("Split", {"a"}, {"y", "mean"}, "f1"), "axis", 1);
    b.node("Neg", {"mean"}, {"inv"}, "f1b");
  }
  b.node("Tanh", {"y"}, {"c"}, "f2");
  test::set_int_attr(b.node("ReduceSum", {"c"}, {"loss"}, "f3"), "keepdims", 0);
  b.node("Neg", {"c"}, {"d1"}, "bw0");
  b.node("Mul", {"d1", "y"}, {"d2"}, "bw1");
  b.node("Sigmoid", {"d2"}, {"d3"}, "bw2");
  b.node("Mul", {"d3", "mean"}, {"d4"}, "bw3");
  b.node("Mul", {"d4", "inv"}, {"d5"}, "bw4");
  b.output("loss").output("d5");
  return sched_test::load(b, small ? "sibling_hold_ln" : "sibling_hold_split");
}

std::size_t count(const std::vector<std::string>& lines, const std::string& line) {
  return static_cast<std::size_t>(std::count(lines.begin(), lines.end(), line));
}

TEST(SiblingHold, SmallStatisticsAreHeldFromTheFirstRecompute) {
  ir::Graph g = two_turn_graph(true);
  ir::NodeCosts costs = unit_costs(g);
  const auto decisions = decide(
      g,
      {{"y", Decision::kRecompute}, {"mean", Decision::kRecompute}, {"inv", Decision::kRecompute}});
  ScheduleResult r = make_schedule(g, costs, decisions, {});
  const auto lines = text(g, r.schedule);
  EXPECT_EQ(count(lines, "recompute f1"), 1u);
  // Made with y before bw1 and kept (not freed) until bw3 and bw4 read them.
  const auto at = [&](const std::string& s) {
    return std::find(lines.begin(), lines.end(), s) - lines.begin();
  };
  EXPECT_LT(at("recompute f1"), at("compute bw1"));
  EXPECT_EQ(count(lines, "free mean"), 2u);  // after f1's forward reads, and after bw3
  EXPECT_GT(std::find(lines.rbegin(), lines.rend(), "free mean").base() - lines.begin(),
            at("compute bw3"));
  sched_test::expect_valid(g, costs, r, UINT64_MAX);
}

TEST(SiblingHold, SiblingsOfLikeSizeAreRemadeWhereDue) {
  ir::Graph g = two_turn_graph(false);
  ir::NodeCosts costs = unit_costs(g);
  const auto decisions = decide(g, {{"y", Decision::kRecompute}, {"mean", Decision::kRecompute}});
  ScheduleResult r = make_schedule(g, costs, decisions, {});
  const auto lines = text(g, r.schedule);
  // Holding mean (256 B) from bw1 to bw3 would cost as much as y itself.
  EXPECT_EQ(count(lines, "recompute f1"), 2u);
  sched_test::expect_valid(g, costs, r, UINT64_MAX);
}

}  // namespace
}  // namespace memplan::planner
