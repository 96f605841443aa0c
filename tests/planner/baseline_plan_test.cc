#include "planner/baseline_plan.h"

#include <gtest/gtest.h>

#include "ir/baseline_memory.h"
#include "ir/device_presets.h"
#include "ir/liveness.h"
#include "ir/node_costs.h"
#include "ir/onnx_loader.h"
#include "planner/plan_json.h"
#include "planner/plan_validator.h"
#include "planner/simulator.h"
#include "support/model_builder.h"
#include "tiny_plan.h"

namespace memplan::planner {
namespace {

TEST(BaselinePlan, TinyScheduleFreesAfterTheLastRead) {
  ir::Graph g = test_util::tiny_graph();
  // b dies after neg, a and c after mul, d after sum; loss is an output.
  EXPECT_EQ(baseline_schedule(g), test_util::steps(g, {{"compute", "mm"},
                                                       {"compute", "relu"},
                                                       {"compute", "neg"},
                                                       {"free", "b"},
                                                       {"compute", "mul"},
                                                       {"free", "a"},
                                                       {"free", "c"},
                                                       {"compute", "sum"},
                                                       {"free", "d"}}));
}

TEST(BaselinePlan, UnreadTensorIsFreedWhenMade) {
  test::ModelBuilder b;
  b.input("x", {std::int64_t{4}});
  b.node("Neg", {"x"}, {"unused"}, "n0");
  b.node("Relu", {"x"}, {"y"}, "n1");
  b.output("y");
  ir::Graph g = ir::load_model(b.write("unused"), {}).graph;
  EXPECT_EQ(baseline_schedule(g),
            test_util::steps(g, {{"compute", "n0"}, {"free", "unused"}, {"compute", "n1"}}));
}

TEST(BaselinePlan, FillsEverything) {
  ir::Graph g = test_util::tiny_graph();
  ir::NodeCosts costs;
  costs.device = ir::device_preset("a100-40gb");
  costs.seconds = {1, 0.5, 3, 1, 0.5};
  Plan plan = baseline_plan(g, costs, {"tiny.onnx", "abc", std::nullopt});
  EXPECT_EQ(plan.solver.name, "baseline");
  EXPECT_EQ(plan.solver.status, "heuristic");
  EXPECT_EQ(plan.solver.objective_seconds, 6.0);
  EXPECT_EQ(plan.budget_bytes, costs.device.memory_bytes);
  EXPECT_EQ(plan.model_path, "tiny.onnx");
  EXPECT_EQ(plan.predicted.peak_bytes, 192u);
  EXPECT_EQ(plan.predicted.baseline_peak_bytes, 192u);
  EXPECT_EQ(plan.predicted.iteration_seconds, 6.0);
  EXPECT_EQ(plan.predicted.baseline_iteration_seconds, 6.0);
  EXPECT_EQ(plan.predicted.compute_seconds, 6.0);
  EXPECT_EQ(plan.decisions, std::vector<Decision>(g.tensors().size(), Decision::kKeep));
  EXPECT_TRUE(validate(g, plan).valid);
}

// Every committed training graph: the baseline plan is valid at a budget of
// exactly its peak, that peak is ir::baseline_memory's, and it survives a
// trip through plan.json.
class BaselineFixture : public ::testing::TestWithParam<const char*> {};

TEST_P(BaselineFixture, ValidWithTheBaselinePeak) {
  const std::string name = GetParam();
  const std::string path = std::string(MEMPLAN_FIXTURES) + "/" + name + ".training.onnx";
  ir::LoadOptions o;
  o.dims["batch"] = 4;
  if (name.rfind("bert_", 0) == 0 || name.rfind("gpt2_", 0) == 0) o.dims["seq"] = 128;
  ir::LoadedModel m = ir::load_model(path, o);
  const ir::Graph& g = m.graph;
  std::vector<std::string> warnings;
  ir::NodeCosts costs =
      ir::make_node_costs(g, ir::device_preset("a100-40gb"), {}, "roofline a100-40gb", warnings);
  const std::uint64_t peak = ir::baseline_memory(g, ir::Liveness(g)).peak_bytes;

  Plan plan = baseline_plan(g, costs, {path, m.sha256, peak});
  Validation v = validate(g, plan);
  ASSERT_TRUE(v.valid) << v.message;
  EXPECT_EQ(v.peak_bytes, peak);
  EXPECT_EQ(plan.predicted.peak_bytes, peak);
  EXPECT_EQ(plan.predicted.baseline_peak_bytes, peak);
  EXPECT_DOUBLE_EQ(plan.predicted.iteration_seconds, costs.total_seconds());

  plan.budget_bytes = peak - 1;
  EXPECT_FALSE(validate(g, plan).valid);
  plan.budget_bytes = peak;

  std::string file = test::temp_path(name + "_baseline") + ".json";
  write_plan_file(g, plan, file);
  Plan back = read_plan_file(g, file);
  EXPECT_EQ(back.schedule, plan.schedule);
  Validation again = validate(g, back);
  EXPECT_TRUE(again.valid) << again.message;
}

INSTANTIATE_TEST_SUITE_P(Zoo, BaselineFixture,
                         ::testing::Values("mlp", "mlp_dropout", "resnet50", "bert_base",
                                           "bert_large", "gpt2_small", "gpt2_medium", "gpt2_large",
                                           "gpt2_xl"));

}  // namespace
}  // namespace memplan::planner
