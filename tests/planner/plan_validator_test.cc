#include "planner/plan_validator.h"

#include <gtest/gtest.h>

#include "ir/onnx_loader.h"
#include "tiny_plan.h"

namespace memplan::planner {
namespace {

using test_util::plan_for;
using test_util::steps;
using test_util::tiny_graph;

// The rule broken must be reported at `step` with `text` in the message.
void expect_invalid(const Validation& v, std::int64_t step, const std::string& text) {
  EXPECT_FALSE(v.valid);
  EXPECT_EQ(v.step, step) << v.message;
  EXPECT_NE(v.message.find(text), std::string::npos) << v.message;
}

class Validator : public ::testing::Test {
 protected:
  ir::Graph g = tiny_graph();
  ir::TensorId id(const char* name) { return *g.find_tensor(name); }
};

TEST_F(Validator, BaselineAndSwapPlansAreValid) {
  Validation base = validate(g, plan_for(g, baseline_schedule(g)));
  EXPECT_TRUE(base.valid) << base.message;
  EXPECT_EQ(base.peak_bytes, 192u);
  Validation swap = validate(g, plan_for(g, test_util::swap_a_schedule(g)));
  EXPECT_TRUE(swap.valid) << swap.message;
  EXPECT_EQ(swap.peak_bytes, 192u);
}

TEST_F(Validator, ComputeInputNotResident) {
  // a freed before mul reads it (step 5).
  auto s = steps(g, {{"compute", "mm"},
                     {"compute", "relu"},
                     {"free", "a"},
                     {"compute", "neg"},
                     {"free", "b"},
                     {"compute", "mul"},
                     {"free", "c"},
                     {"compute", "sum"},
                     {"free", "d"}});
  expect_invalid(validate(g, plan_for(g, s)), 5,
                 "step 5 (compute 'mul'): input 'a' is not resident");
}

TEST_F(Validator, ComputeBeforeItsInputIsMade) {
  auto s = steps(g, {{"compute", "relu"}});
  expect_invalid(validate(g, plan_for(g, s)), 0, "input 'a' is not resident");
}

TEST_F(Validator, NodeComputedTwice) {
  auto s = baseline_schedule(g);
  s.insert(s.begin() + 1, s[0]);  // compute mm again right away
  expect_invalid(validate(g, plan_for(g, s)), 1,
                 "step 1 (compute 'mm'): node 'mm' is computed a second time");
}

TEST_F(Validator, NodeNeverComputed) {
  auto s = baseline_schedule(g);
  s.resize(s.size() - 2);  // drop "compute sum" and "free d"
  Plan plan = plan_for(g, s);
  expect_invalid(validate(g, plan), -1, "node 'sum' is never computed");
}

TEST_F(Validator, RecomputeBeforeCompute) {
  auto s = baseline_schedule(g);
  s.insert(s.begin(), steps(g, {{"recompute", "mm"}})[0]);
  expect_invalid(validate(g, plan_for(g, s)), 0, "recomputed before its compute step");
}

TEST_F(Validator, RecomputeOfARandomNode) {
  test::ModelBuilder b;
  b.input("x", {std::int64_t{2}, std::int64_t{4}});
  b.node("Dropout", {"x"}, {"y"}, "drop");
  b.node("Relu", {"y"}, {"z"}, "relu");
  b.output("z");
  ir::Graph rg = ir::load_model(b.write("dropout"), {}).graph;
  auto s =
      steps(rg, {{"compute", "drop"}, {"free", "y"}, {"recompute", "drop"}, {"compute", "relu"}});
  expect_invalid(validate(rg, plan_for(rg, s)), 2, "'drop' (Dropout) is random");
}

TEST_F(Validator, SwapOutOfANonResidentTensor) {
  auto s = steps(g, {{"swap_out", "a"}});
  expect_invalid(validate(g, plan_for(g, s)), 0, "step 0 (swap_out 'a'): 'a' is not resident");
}

TEST_F(Validator, SwapInOfAResidentTensor) {
  auto s = steps(g, {{"compute", "mm"}, {"swap_out", "a"}, {"swap_in", "a"}});
  expect_invalid(validate(g, plan_for(g, s)), 2, "'a' is already resident");
}

TEST_F(Validator, SwapInWithoutAHostCopy) {
  auto s = steps(g, {{"compute", "mm"}, {"free", "a"}, {"swap_in", "a"}});
  expect_invalid(validate(g, plan_for(g, s)), 2, "'a' has no host copy");
}

TEST_F(Validator, FreeOfANonResidentTensor) {
  auto s = test_util::swap_a_schedule(g);
  s.insert(s.begin() + 4, steps(g, {{"free", "a"}})[0]);  // a second free of a
  expect_invalid(validate(g, plan_for(g, s)), 4, "step 4 (free 'a'): 'a' is not resident");
}

TEST_F(Validator, GraphOutputFreedAtTheEnd) {
  auto s = baseline_schedule(g);
  s.push_back({StepOp::kFree, id("loss")});
  expect_invalid(validate(g, plan_for(g, s)), -1, "graph output 'loss' is not resident at the end");
}

TEST_F(Validator, TensorBytesDifferFromTheGraph) {
  Plan plan = plan_for(g, baseline_schedule(g));
  plan.tensor_bytes[id("c")] = 31;
  expect_invalid(validate(g, plan), -1, "tensor 'c': bytes 31 in the plan, 32 in the graph");
}

TEST_F(Validator, PredictedPeakMustBeExact) {
  Plan plan = plan_for(g, baseline_schedule(g));
  plan.predicted.peak_bytes = 191;
  expect_invalid(validate(g, plan), -1, "predicted.peak_bytes is 191; the schedule's peak is 192");
}

TEST_F(Validator, OverBudgetNamesTheFirstStepOver) {
  // Baseline memory: 128, 160, 192 (step 2, compute neg), ...
  Plan plan = plan_for(g, baseline_schedule(g));
  plan.budget_bytes = 191;
  expect_invalid(validate(g, plan), 2,
                 "step 2 (compute 'neg'): 192 bytes in use, over budget_bytes 191");
  plan.budget_bytes = 95;  // the graph inputs alone are 96
  expect_invalid(validate(g, plan), -1, "initial state holds 96 bytes");
  plan.budget_bytes = 192;
  EXPECT_TRUE(validate(g, plan).valid);
}

TEST_F(Validator, PredictedTimingMustFollowTheRules) {
  Plan plan = plan_for(g, test_util::swap_a_schedule(g));
  ASSERT_DOUBLE_EQ(plan.predicted.iteration_seconds, 8.5);
  plan.predicted.iteration_seconds = 8.5 * (1 + 1e-12);  // within 1e-9 relative
  EXPECT_TRUE(validate(g, plan).valid);
  plan.predicted.iteration_seconds = 8.5 * (1 + 1e-8);
  expect_invalid(validate(g, plan), -1, "predicted.iteration_seconds");
  plan.predicted.iteration_seconds = 8.5;
  plan.predicted.compute_seconds = 6.5;
  expect_invalid(validate(g, plan), -1, "predicted.compute_seconds is 6.5");
}

TEST_F(Validator, BaselineNumbersMustMatch) {
  Plan plan = plan_for(g, test_util::swap_a_schedule(g));
  plan.predicted.baseline_peak_bytes = 100;
  expect_invalid(validate(g, plan), -1, "the baseline's peak is 192");
  plan = plan_for(g, test_util::swap_a_schedule(g));
  plan.predicted.baseline_iteration_seconds = 7;
  expect_invalid(validate(g, plan), -1, "node_seconds sum to 6");
}

TEST_F(Validator, NodeSecondsAndDims) {
  Plan plan = plan_for(g, baseline_schedule(g));
  plan.node_seconds.pop_back();
  expect_invalid(validate(g, plan), -1, "node_seconds has 4 entries for 5 nodes");
  plan = plan_for(g, baseline_schedule(g));
  plan.node_seconds[0] = -1;
  expect_invalid(validate(g, plan), -1, "node_seconds of 'mm'");
  plan = plan_for(g, baseline_schedule(g));
  plan.dims["batch"] = 8;
  expect_invalid(validate(g, plan), -1, "model.dims {batch=8} differ");
}

TEST_F(Validator, SwapNeedsABandwidth) {
  Plan plan = plan_for(g, test_util::swap_a_schedule(g));
  plan.device.h2d_bytes_per_s = 0;
  expect_invalid(validate(g, plan), 6, "step 6 (swap_in 'a'): device.h2d_bytes_per_s is 0");
}

TEST_F(Validator, AliasesShareTheirBaseStorage) {
  // Declare b an alias of a (as if Relu were a view): b takes no bytes and
  // is resident while a is; steps name a, never b.
  auto s = steps(g, {{"compute", "mm"},
                     {"compute", "relu"},
                     {"compute", "neg"},
                     {"compute", "mul"},
                     {"free", "a"},
                     {"free", "c"},
                     {"compute", "sum"},
                     {"free", "d"}});
  Plan plan = plan_for(g, s);
  plan.alias_of.assign(g.tensors().size(), ir::kNoTensor);
  plan.alias_of[id("b")] = id("a");
  plan.tensor_bytes[id("b")] = 0;
  fill_predicted(g, plan);
  // 96, mm 128, relu 128 (b is a), neg 160, mul 192, free a 160 ...
  EXPECT_EQ(plan.predicted.peak_bytes, 192u);
  Validation v = validate(g, plan);
  EXPECT_TRUE(v.valid) << v.message;

  Plan named = plan;  // a step that names the alias
  named.schedule.insert(named.schedule.begin() + 3, {StepOp::kFree, id("b")});
  expect_invalid(validate(g, named), 3, "'b' is an alias of 'a'; steps name the base");

  Plan early = plan;  // b's base freed before neg reads b
  early.schedule =
      steps(g, {{"compute", "mm"}, {"compute", "relu"}, {"free", "a"}, {"compute", "neg"}});
  expect_invalid(validate(g, early), 3, "input 'b' is not resident");

  Plan sized = plan;
  sized.tensor_bytes[id("b")] = 32;
  expect_invalid(validate(g, sized), -1, "bytes 32 in the plan, 0 for an alias");

  Plan cycle = plan;
  cycle.alias_of[id("a")] = id("b");
  cycle.tensor_bytes[id("a")] = 0;
  expect_invalid(validate(g, cycle), -1, "forms a cycle");
}

}  // namespace
}  // namespace memplan::planner
