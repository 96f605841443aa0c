// A dropout recomputed from its kept mask becomes the ONNX Runtime nodes
// that give its output back: (Bitmask)DropoutGrad on the mask, after
// Add(data, bias) and before Add(residual) for the fused bias forms.
#include "passes/dropout_from_mask.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "ir/onnx_loader.h"
#include "passes/model_check.h"
#include "passes/plan_summary.h"
#include "passes/rewrite_model.h"
#include "passes/rewrite_test_support.h"
#include "planner/baseline_plan.h"
#include "support/dropout_forms.h"
#include "util/errors.h"

namespace memplan::passes {
namespace {

using planner::Step;
using planner::StepOp;
using test::DropoutForm;

ir::LoadedModel load(const onnx::ModelProto& model, const std::string& stem) {
  test::ModelBuilder copy;
  copy.proto() = model;
  ir::LoadOptions o;
  o.dims = {{"batch", 2}};
  return ir::load_model(copy.write(stem), o);
}

// The plan: everything computed once, and dr freed after its forward
// readers and remade for bw1 (a, the dropout's input, stays).
planner::Plan recompute_plan(const ir::Graph& g) {
  std::vector<Step> s;
  for (const char* n : {"f0", "drop", "f2", "f3", "bw0"})
    s.push_back({StepOp::kCompute, *g.find_node(n)});
  s.push_back({StepOp::kFree, *g.find_tensor("dr")});
  s.push_back({StepOp::kRecompute, *g.find_node("drop")});
  s.push_back({StepOp::kCompute, *g.find_node("bw1")});
  if (auto bw2 = g.find_node("bw2")) s.push_back({StepOp::kCompute, *bw2});

  planner::Plan plan = test_support::plan_for(g, std::move(s));
  plan.decisions[*g.find_tensor("dr")] = planner::Decision::kRecompute;
  return plan;
}

std::vector<std::string> io(const google::protobuf::RepeatedPtrField<std::string>& list) {
  return {list.begin(), list.end()};
}

// What the remake of `form` should be: op type, domain, inputs, output.
struct Expected {
  std::string name, op, domain;
  std::vector<std::string> inputs;
  std::string output;
};

std::vector<Expected> expected_remake(const DropoutForm& f) {
  const std::string grad = f.bitmask() ? "BitmaskDropoutGrad" : "DropoutGrad";
  std::vector<std::string> ratio;
  if (f.ratio) ratio = {"ratio", "training"};
  std::vector<Expected> out;
  std::string x = "a";
  if (f.bias()) {
    out.push_back({"drop_recompute_bias", "Add", "", {"a", "bias"}, "dr_recompute_biased"});
    x = "dr_recompute_biased";
  }
  std::vector<std::string> grad_in{x, "mask"};
  grad_in.insert(grad_in.end(), ratio.begin(), ratio.end());
  const std::string dropped = f.residual ? "dr_recompute_dropped" : "dr_recompute";
  out.push_back({"drop_recompute", grad, "com.microsoft", grad_in, dropped});
  if (f.residual)
    out.push_back(
        {"drop_recompute_residual", "Add", "", {"dr_recompute_dropped", "res"}, "dr_recompute"});
  return out;
}

std::string form_name(const testing::TestParamInfo<DropoutForm>& info) {
  return info.param.label();
}

class RemadeFromMask : public testing::TestWithParam<DropoutForm> {};

TEST_P(RemadeFromMask, TheRewriteEmitsTheExpectedNodes) {
  const DropoutForm& form = GetParam();
  ir::LoadedModel m = load(test::dropout_form_model(form).proto(), "remake_" + form.label());
  planner::Plan plan = recompute_plan(m.graph);
  RewriteOptions options;
  options.anchor_order = AnchorOrder::kNone;  // the remake's own nodes are read here
  onnx::ModelProto out = rewrite_model(m.proto, m.graph, plan, options);

  const std::vector<Expected> remake = expected_remake(form);
  ASSERT_EQ(out.graph().node_size(), static_cast<int>(m.graph.nodes().size() + remake.size()));
  // f0 drop f2 f3 bw0, then the remake, then bw1 (and bw2).
  for (std::size_t i = 0; i < remake.size(); ++i) {
    const onnx::NodeProto& n = out.graph().node(static_cast<int>(5 + i));
    const Expected& e = remake[i];
    EXPECT_EQ(n.name(), e.name);
    EXPECT_EQ(n.op_type(), e.op) << e.name;
    EXPECT_EQ(n.domain(), e.domain) << e.name;
    EXPECT_EQ(io(n.input()), e.inputs) << e.name;
    EXPECT_EQ(io(n.output()), std::vector<std::string>{e.output}) << e.name;
    EXPECT_EQ(n.doc_string(), std::string(kRecomputeDoc) + "drop");
    EXPECT_EQ(n.attribute_size(), 0) << e.name;
  }
  const onnx::NodeProto& bw1 = out.graph().node(static_cast<int>(5 + remake.size()));
  EXPECT_EQ(bw1.name(), "bw1");
  EXPECT_EQ(io(bw1.input()), (std::vector<std::string>{"g1", "dr_recompute"}));
  EXPECT_EQ(read_summary(out, "out.onnx")->recomputes, 1u);

  EXPECT_EQ(checker_problem(out), "");
  EXPECT_EQ(shape_inference_problem(out), "");
  // memplan reads it back; the remade output has dr's type and shape.
  ir::LoadedModel again = load(out, "remade_" + form.label());
  EXPECT_EQ(again.graph.nodes().size(), m.graph.nodes().size() + remake.size());
  EXPECT_EQ(again.graph.tensor(*again.graph.find_tensor("dr_recompute")).bytes,
            m.graph.tensor(*m.graph.find_tensor("dr")).bytes);
}

TEST_P(RemadeFromMask, WithoutTheMaskOutputTheRecomputeIsRefused) {
  DropoutForm form = GetParam();
  form.mask = false;
  ir::LoadedModel m = load(test::dropout_form_model(form).proto(), "random_" + form.label());
  EXPECT_THROW(rewrite_model(m.proto, m.graph, recompute_plan(m.graph), {}), InvalidPlanError);
}

INSTANTIATE_TEST_SUITE_P(AllForms, RemadeFromMask, testing::ValuesIn(test::dropout_forms(true)),
                         form_name);

onnx::NodeProto node(const std::string& op, std::vector<std::string> inputs) {
  onnx::NodeProto n;
  n.set_op_type(op);
  n.set_domain(op == "Dropout" ? "" : "com.microsoft");
  for (auto& in : inputs) n.add_input(std::move(in));
  n.add_output("y");
  n.add_output("m");
  auto* seed = n.add_attribute();
  seed->set_name("seed");
  seed->set_type(onnx::AttributeProto::INT);
  seed->set_i(7);
  return n;
}

// A training_mode without a ratio keeps the ratio slot, empty: the grad op
// then takes its default 0.5, the forward's.
TEST(DropoutFromMask, AnAbsentRatioStaysAbsent) {
  FreshNames values = FreshNames::values_of({});
  auto plain = dropout_from_mask(node("Dropout", {"x", "", "t"}), "m_kept", values);
  ASSERT_EQ(plain.size(), 1u);
  EXPECT_EQ(io(plain[0].node.input()), (std::vector<std::string>{"x", "m_kept", "", "t"}));
  EXPECT_EQ(io(plain[0].node.output()), std::vector<std::string>{"y"});

  auto fused =
      dropout_from_mask(node("BitmaskBiasDropout", {"x", "b", "", "", "t"}), "m_kept", values);
  ASSERT_EQ(fused.size(), 2u);
  EXPECT_EQ(fused[1].node.op_type(), "BitmaskDropoutGrad");
  EXPECT_EQ(io(fused[1].node.input()),
            (std::vector<std::string>{"y_recompute_biased", "m_kept", "", "t"}));
  EXPECT_EQ(io(fused[1].node.output()), std::vector<std::string>{"y"});
}

// Trailing absent slots are dropped; the names between nodes are fresh.
TEST(DropoutFromMask, TrailingAbsentInputsAreLeftOutAndNamesAreFresh) {
  onnx::GraphProto taken;
  taken.add_input()->set_name("y_recompute_biased");
  FreshNames values = FreshNames::values_of(taken);
  auto nodes = dropout_from_mask(node("BiasDropout", {"x", "b", "r", "", ""}), "m", values);
  ASSERT_EQ(nodes.size(), 3u);
  EXPECT_EQ(io(nodes[0].node.output()), std::vector<std::string>{"y_recompute_biased_2"});
  EXPECT_EQ(io(nodes[1].node.input()), (std::vector<std::string>{"y_recompute_biased_2", "m"}));
  EXPECT_EQ(io(nodes[2].node.input()), (std::vector<std::string>{"y_recompute_dropped", "r"}));
  EXPECT_EQ(io(nodes[2].node.output()), std::vector<std::string>{"y"});
  EXPECT_EQ(nodes[0].name_suffix, "_recompute_bias");
  EXPECT_EQ(nodes[2].name_suffix, "_recompute_residual");
}

}  // namespace
}  // namespace memplan::passes
