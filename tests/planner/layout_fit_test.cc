// Plans whose memory layout fits the budget: where the first plan's arena
// overshoots (the planner counts exact bytes, the layout 256-byte slots and
// what best fit cannot pack), search_plan_with_layout plans again lower and
// keeps the budget asked for.
#include "planner/layout_fit.h"

#include <gtest/gtest.h>

#include "ir/device_presets.h"
#include "ir/node_costs.h"
#include "ir/onnx_loader.h"
#include "planner/memory_layout.h"
#include "planner/plan_validator.h"

namespace memplan::planner {
namespace {

struct Loaded {
  ir::Graph graph;
  ir::NodeCosts costs;
};

Loaded load_mlp() {
  Loaded l;
  ir::LoadOptions o;
  o.dims = {{"batch", 64}};
  l.graph = ir::load_model(std::string(MEMPLAN_FIXTURES) + "/mlp.training.onnx", o).graph;
  std::vector<std::string> warnings;
  l.costs = ir::make_node_costs(l.graph, ir::device_preset("a100-40gb"), {}, "roofline", warnings);
  return l;
}

PlanRequest vdnn_at(std::uint64_t budget) {
  PlanRequest req;
  req.solver = "vdnn";
  req.budget_bytes = budget;
  return req;
}

// mlp, swap-only at its reachable peak: the peak fits exactly, the arena
// did not (3210 B over before issue 19).
TEST(LayoutFit, AtTheReachablePeakTheFirstLayoutOvershoots) {
  const Loaded l = load_mlp();
  const std::uint64_t floor = smallest_reachable_peak(l.graph, l.costs, true, false);
  PlanOutcome plain = search_plan(l.graph, l.costs, vdnn_at(floor));
  ASSERT_TRUE(plain.fits);
  EXPECT_GT(compute_memory_layout(l.graph, plain.plan).arena_bytes, floor);
}

TEST(LayoutFit, FromTheReachableBudgetUpTheLayoutFits) {
  const Loaded l = load_mlp();
  const std::uint64_t reach = smallest_reachable_budget(l.graph, l.costs, vdnn_at(0));
  EXPECT_GE(reach, smallest_reachable_peak(l.graph, l.costs, true, false));
  for (std::uint64_t budget : {reach, reach + reach / 100, reach + reach / 10}) {
    const LayoutFitOutcome fit = search_plan_with_layout(l.graph, l.costs, vdnn_at(budget));
    ASSERT_TRUE(fit.outcome.fits);
    EXPECT_TRUE(fit.layout_fits) << "budget " << budget;
    const Plan& plan = fit.outcome.plan;
    ASSERT_TRUE(plan.memory_layout.has_value());
    EXPECT_LE(plan.memory_layout->arena_bytes, budget);
    EXPECT_EQ(plan.budget_bytes, budget);  // as asked, whatever it was planned for
    EXPECT_LE(fit.planning_budget_bytes, budget);
    const Validation v = validate(l.graph, plan);
    EXPECT_TRUE(v.valid) << v.message;
  }
}

TEST(LayoutFit, BelowTheReachableBudgetItSaysItDoesNotFit) {
  const Loaded l = load_mlp();
  const std::uint64_t floor = smallest_reachable_peak(l.graph, l.costs, true, false);
  const std::uint64_t reach = smallest_reachable_budget(l.graph, l.costs, vdnn_at(0));
  if (reach == floor) GTEST_SKIP() << "the floor plan's layout fits its peak exactly";
  const LayoutFitOutcome fit = search_plan_with_layout(l.graph, l.costs, vdnn_at(floor));
  ASSERT_TRUE(fit.outcome.fits);
  EXPECT_FALSE(fit.layout_fits);
  EXPECT_GT(fit.outcome.plan.memory_layout->arena_bytes, floor);
  EXPECT_GE(fit.replans, 1);
}

}  // namespace
}  // namespace memplan::planner
