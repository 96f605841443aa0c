// search_plan's heuristic: never slower than its recompute-only variant,
// whose own tightening rounds may fit at a model budget the mixed runs
// never reach, nor than the swap-only and recompute-only pipelines.
#include "planner/plan_search.h"

#include <gtest/gtest.h>

#include "ir/baseline_memory.h"
#include "ir/device_presets.h"
#include "ir/liveness.h"
#include "ir/node_costs.h"
#include "ir/onnx_loader.h"
#include "support/fixture_graph.h"

namespace memplan::planner {
namespace {

struct Resnet50 {
  ir::Graph g;
  ir::NodeCosts costs;
  std::uint64_t peak = 0;
};

Resnet50 resnet50_on_h100() {
  test::FixtureGraph f = test::load_fixture("resnet50.training.onnx", {{"batch", 32}}, "h100-80gb");
  Resnet50 r{std::move(f.graph), std::move(f.costs)};
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

// bert_base (batch 8 x 512) on v100-32gb at 20 % of its peak: the mixed
// greedy's plan did not fit, while the swap-only pipeline's did (322.53 %).
// The heuristic now fits wherever one way alone does, and is no slower.
TEST(PlanSearch, TheHeuristicIsNeverWorseThanEitherWayAlone) {
  const auto [g, costs] =
      test::load_fixture("bert_base.training.onnx", {{"batch", 8}, {"seq", 512}}, "v100-32gb");
  PlanRequest req;
  req.solver = "greedy";
  req.budget_bytes = ir::baseline_memory(g, ir::Liveness(g)).peak_bytes * 20 / 100;
  const PlanOutcome mixed = search_plan(g, costs, req);
  int alone_fits = 0;
  for (const solvers::Evictions only :
       {solvers::Evictions::swap_only(), solvers::Evictions::recompute_only()}) {
    PlanRequest one = req;
    one.evictions = only;
    const PlanOutcome a = search_plan(g, costs, one);
    if (!a.fits) continue;
    ++alone_fits;
    ASSERT_TRUE(mixed.fits) << (only.swap ? "swap" : "recompute") << " alone fits";
    EXPECT_LE(mixed.plan.predicted.iteration_seconds, a.plan.predicted.iteration_seconds);
  }
  EXPECT_GE(alone_fits, 1);
}

}  // namespace
}  // namespace memplan::planner
