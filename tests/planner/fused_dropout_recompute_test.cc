// ONNX Runtime's fused dropouts (BitmaskDropout, BiasDropout,
// BitmaskBiasDropout) are recomputed from their kept mask like a Dropout
// that outputs its mask; without the mask output they stay random.
#include <gtest/gtest.h>

#include <algorithm>

#include "planner/plan_validator.h"
#include "scheduler_test_util.h"
#include "solvers/problem_builder.h"
#include "support/dropout_forms.h"

namespace memplan::planner {
namespace {

using sched_test::applied;
using sched_test::decide;
using sched_test::text;
using sched_test::unit_costs;
using test::DropoutForm;

ir::Graph load_form(const DropoutForm& form) {
  return sched_test::load(test::dropout_form_model(form), "fused_dropout_" + form.label());
}

bool has_step(const ir::Graph& g, const std::vector<Step>& schedule, const std::string& line) {
  const auto lines = text(g, schedule);
  return std::find(lines.begin(), lines.end(), line) != lines.end();
}

const solvers::Candidate* candidate(const solvers::Problem& p, ir::TensorId t) {
  for (const auto& c : p.candidates)
    if (c.tensor == t) return &c;
  return nullptr;
}

std::string form_name(const testing::TestParamInfo<DropoutForm>& info) {
  return info.param.label();
}

class WithMask : public testing::TestWithParam<DropoutForm> {};
class WithoutMask : public testing::TestWithParam<DropoutForm> {};

TEST_P(WithMask, TheMaskOutputMakesItReproducible) {
  ir::Graph g = load_form(GetParam());
  const ir::Node& drop = g.node(*g.find_node("drop"));
  const ir::TensorId mask = *g.find_tensor("mask");
  EXPECT_TRUE(drop.is_random());
  EXPECT_EQ(drop.dropout_mask(), mask);
  EXPECT_TRUE(drop.reproducible());
  // [2, 8]: a bool per element, or one bit per element in uint32 words.
  EXPECT_EQ(g.tensor(mask).bytes, GetParam().bitmask() ? 4u : 16u);
}

TEST_P(WithMask, RecomputedWhileTheMaskStaysAndValidated) {
  ir::Graph g = load_form(GetParam());
  ir::NodeCosts costs = unit_costs(g);
  ScheduleResult r = make_schedule(g, costs, decide(g, {{"dr", Decision::kRecompute}}), {});
  EXPECT_EQ(applied(g, r, "dr"), Decision::kRecompute);
  EXPECT_TRUE(has_step(g, r.schedule, "recompute drop"));
  const Validation v = sched_test::validate_result(g, costs, r, UINT64_MAX);
  EXPECT_TRUE(v.valid) << v.message;
  EXPECT_EQ(sched_test::replay(g, r.schedule), "");
}

TEST_P(WithMask, KeptWhenTheMaskIsEvicted) {
  ir::Graph g = load_form(GetParam());
  ScheduleResult r = make_schedule(
      g, unit_costs(g), decide(g, {{"dr", Decision::kRecompute}, {"mask", Decision::kSwap}}), {});
  EXPECT_EQ(applied(g, r, "dr"), Decision::kKeep);
  EXPECT_FALSE(has_step(g, r.schedule, "recompute drop"));
}

TEST_P(WithMask, TheValidatorRefusesARecomputeWithoutTheMask) {
  ir::Graph g = load_form(GetParam());
  ir::NodeCosts costs = unit_costs(g);
  ScheduleResult r = make_schedule(g, costs, decide(g, {{"dr", Decision::kRecompute}}), {});
  std::vector<Step> s = r.schedule;
  const auto rec = std::find(s.begin(), s.end(), Step{StepOp::kRecompute, *g.find_node("drop")});
  ASSERT_NE(rec, s.end());
  s.erase(rec + 1, s.end());
  s.insert(s.end() - 1, Step{StepOp::kFree, *g.find_tensor("mask")});
  Validation v = validate(g, sched_test::whole_plan(g, costs, s, r.applied, true, 0, UINT64_MAX));
  EXPECT_FALSE(v.valid);
  EXPECT_NE(v.message.find("(" + GetParam().op + ") is recomputed from its mask 'mask'"),
            std::string::npos)
      << v.message;
}

TEST_P(WithMask, TheKnapsackOffersItAndHoldsTheMask) {
  ir::Graph g = load_form(GetParam());
  solvers::Problem p = solvers::build_problem(g, unit_costs(g, 2.0), 0, {});
  const solvers::Candidate* dr = candidate(p, *g.find_tensor("dr"));
  ASSERT_NE(dr, nullptr);
  EXPECT_TRUE(dr->can_recompute);
  EXPECT_DOUBLE_EQ(dr->recompute_seconds, 4.0);  // the dropout and Relu, whose a is freed
  EXPECT_EQ(candidate(p, *g.find_tensor("mask")), nullptr);
}

TEST_P(WithoutMask, StaysRandom) {
  ir::Graph g = load_form(GetParam());
  const ir::Node& drop = g.node(*g.find_node("drop"));
  EXPECT_TRUE(drop.is_random());
  EXPECT_EQ(drop.dropout_mask(), ir::kNoTensor);
  EXPECT_FALSE(drop.reproducible());

  ir::NodeCosts costs = unit_costs(g);
  ScheduleResult r = make_schedule(g, costs, decide(g, {{"dr", Decision::kRecompute}}), {});
  EXPECT_EQ(applied(g, r, "dr"), Decision::kKeep);
  EXPECT_FALSE(has_step(g, r.schedule, "recompute drop"));

  solvers::Problem p = solvers::build_problem(g, costs, 0, {});
  const solvers::Candidate* dr = candidate(p, *g.find_tensor("dr"));
  EXPECT_TRUE(dr == nullptr || !dr->can_recompute);
}

TEST_P(WithoutMask, TheValidatorRefusesARecompute) {
  ir::Graph g = load_form(GetParam());
  ir::NodeCosts costs = unit_costs(g);
  std::vector<Step> s = baseline_schedule(g);
  const auto at = std::find(s.begin(), s.end(), Step{StepOp::kCompute, *g.find_node("drop")});
  ASSERT_NE(at, s.end());
  s.insert(at + 1, Step{StepOp::kRecompute, *g.find_node("drop")});
  std::vector<Decision> keep(g.tensors().size(), Decision::kKeep);
  Validation v = validate(g, sched_test::whole_plan(g, costs, s, keep, true, 0, UINT64_MAX));
  EXPECT_FALSE(v.valid);
  EXPECT_NE(v.message.find("is random and cannot be recomputed"), std::string::npos) << v.message;
}

// BiasSoftmaxDropout(data, bias, ratio) -> (y, mask, softmax_y) draws a mask
// too; memplan has no remake for it, so it stays random, mask or not.
TEST(FusedDropout, BiasSoftmaxDropoutIsRandom) {
  test::ModelBuilder b;
  b.input("x", {std::string("batch"), std::int64_t{8}});
  b.input("bias", {std::int64_t{8}});
  b.node("BiasSoftmaxDropout", {"x", "bias"}, {"y", "mask", "soft"}, "bsd", "com.microsoft");
  test::set_int_attr(b.node("ReduceSum", {"y"}, {"loss"}, "f1"), "keepdims", 0);
  b.output("loss");
  ir::Graph g = sched_test::load(b, "bias_softmax_dropout");
  const ir::Node& n = g.node(*g.find_node("bsd"));
  EXPECT_TRUE(n.is_random());
  EXPECT_EQ(n.dropout_mask(), ir::kNoTensor);
  EXPECT_FALSE(n.reproducible());
}

INSTANTIATE_TEST_SUITE_P(FusedDropout, WithMask, testing::ValuesIn(test::dropout_forms(true)),
                         form_name);
INSTANTIATE_TEST_SUITE_P(FusedDropout, WithoutMask, testing::ValuesIn(test::dropout_forms(false)),
                         form_name);

}  // namespace
}  // namespace memplan::planner
