// search_plan's heuristic: never slower than its recompute-only variant,
// whose own tightening rounds may fit at a model budget the mixed runs
// never reach.
#include "planner/plan_search.h"

#include <gtest/gtest.h>

#include "ir/baseline_memory.h"
#include "ir/device_presets.h"
#include "ir/liveness.h"
#include "ir/node_costs.h"
#include "ir/onnx_loader.h"

namespace memplan::planner {
namespace {

struct Resnet50 {
  ir::Graph g;
  ir::NodeCosts costs;
  std::uint64_t peak = 0;
};

Resnet50 resnet50_on_h100() {
  ir::LoadOptions o;
  o.dims = {{"batch", 32}};
  Resnet50 r;
  r.g = ir::load_model(std::string(MEMPLAN_FIXTURES) + "/resnet50.training.onnx", o).graph;
  std::vector<std::string> warnings;
  r.costs = ir::make_node_costs(r.g, ir::device_preset("h100-80gb"), {}, "roofline", warnings);
  r.peak = ir::baseline_memory(r.g, ir::Liveness(r.g)).peak_bytes;
  return r;
}

// resnet50 (batch 32) on h100-80gb at 30 % of its peak: the greedy's plan
// simulated 53.36 % over the baseline, recompute-greedy's 50.59 %.
TEST(PlanSearch, TheHeuristicIsNeverSlowerThanItsRecomputeOnlyVariant) {
  const auto [g, costs, peak] = resnet50_on_h100();
  int checked = 0;
  for (std::uint64_t percent : {30, 40}) {
    PlanRequest req;
    req.budget_bytes = peak * percent / 100;
    req.solver = "greedy";
    const PlanOutcome mixed = search_plan(g, costs, req);
    req.solver = "recompute-greedy";
    const PlanOutcome only = search_plan(g, costs, req);
    ASSERT_TRUE(only.fits) << percent;
    EXPECT_TRUE(mixed.fits) << percent;
    EXPECT_LE(mixed.plan.predicted.iteration_seconds, only.plan.predicted.iteration_seconds)
        << percent << " %";
    ++checked;
  }
  EXPECT_EQ(checked, 2);
}

// At 30 % the first fit simulated 50.59 % over the baseline against 25.45 %
// in the model (remakes the model does not see); at a model budget of 90 %
// of the budget the heuristic finds a plan of 31.00 %. Activations only:
// with training state offloaded another route wins there.
TEST(PlanSearch, WhereTheModelMispricesTheFitTighterModelBudgetsAreTried) {
  const auto [g, costs, peak] = resnet50_on_h100();
  PlanRequest req;
  req.budget_bytes = peak * 30 / 100;
  req.solver = "greedy";
  req.offload_state = false;
  const PlanOutcome out = search_plan(g, costs, req);
  ASSERT_TRUE(out.fits);
  const auto& p = out.plan.predicted;
  EXPECT_LT(p.iteration_seconds, 1.40 * p.baseline_iteration_seconds);
  EXPECT_NE(out.note.find("(the model mispriced the first fit)"), std::string::npos) << out.note;
}

}  // namespace
}  // namespace memplan::planner
