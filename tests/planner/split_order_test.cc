// The over-budget repair splits held reloads; which ones it splits first
// decides what the schedule costs (planner/segment_split.h, SplitOrder).
#include <gtest/gtest.h>

#include <algorithm>

#include "scheduler_test_util.h"
#include "two_held_graph.h"

namespace memplan::planner {
namespace {

using sched_test::decide;
using sched_test::expect_valid;
using sched_test::two_held_graph;
using sched_test::unit_costs;

std::size_t count(const ScheduleResult& r, StepOp op, std::uint32_t id) {
  return static_cast<std::size_t>(std::count(r.schedule.begin(), r.schedule.end(), Step{op, id}));
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
