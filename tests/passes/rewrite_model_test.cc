// The rewrite on graphs small enough to read the result node by node.
#include "passes/rewrite_model.h"

#include <gtest/gtest.h>

#include <initializer_list>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "ir/onnx_loader.h"
#include "passes/model_check.h"
#include "passes/order_anchor.h"
#include "passes/plan_summary.h"
#include "passes/rewrite_test_support.h"
#include "passes/swap_functions.h"
#include "planner/baseline_plan.h"
#include "support/model_builder.h"
#include "util/errors.h"

namespace memplan::passes {
namespace {

using namespace test_support;

// float32 [2,4] throughout; x, w, scale, bias are graph inputs.
//   mm:   a = MatMul(x, w)        relu: b = Relu(a)
//   ln:   y, mean, inv = LayerNormalization(b, scale, bias)
//   neg:  c = Neg(y)              mul:  d = Mul(c, a)   (reads a late)
//   mul2: e = Mul(d, b)           mul3: f = Mul(e, y)   (read b and y late)
//   sum:  loss = ReduceSum(f)
onnx::ModelProto hand_model() {
  test::ModelBuilder b;
  b.input("x", {std::int64_t{2}, std::int64_t{4}});
  b.input("w", {std::int64_t{4}, std::int64_t{4}});
  b.input("scale", {std::int64_t{4}});
  b.input("bias", {std::int64_t{4}});
  b.node("MatMul", {"x", "w"}, {"a"}, "mm");
  b.node("Relu", {"a"}, {"b"}, "relu");
  b.node("LayerNormalization", {"b", "scale", "bias"}, {"y", "mean", "inv"}, "ln");
  b.node("Neg", {"y"}, {"c"}, "neg");
  b.node("Mul", {"c", "a"}, {"d"}, "mul");
  b.node("Mul", {"d", "b"}, {"e"}, "mul2");
  b.node("Mul", {"e", "y"}, {"f"}, "mul3");
  test::set_int_attr(b.node("ReduceSum", {"f"}, {"loss"}, "sum"), "keepdims", 0);
  b.output("loss", {}, 1, /*with_shape=*/true);
  auto* meta = b.proto().add_metadata_props();
  meta->set_key("producer.note");
  meta->set_value("kept");
  return b.proto();
}

// a swapped out after mm and in for mul; relu recomputed for mul2 (a still
// back); ln recomputed for mul3, its mean and inv freed as soon as made.
std::vector<Step> swap_and_recompute(const ir::Graph& g) {
  return steps(g,
               {{"compute", "mm"},  {"swap_out", "a"},     {"compute", "relu"}, {"free", "a"},
                {"compute", "ln"},  {"free", "b"},         {"free", "mean"},    {"free", "inv"},
                {"compute", "neg"}, {"free", "y"},         {"swap_in", "a"},    {"compute", "mul"},
                {"free", "c"},      {"recompute", "relu"}, {"free", "a"},       {"compute", "mul2"},
                {"free", "d"},      {"recompute", "ln"},   {"free", "b"},       {"free", "mean"},
                {"free", "inv"},    {"compute", "mul3"},   {"free", "e"},       {"free", "y"},
                {"compute", "sum"}, {"free", "f"}});
}

// The value input `slot` of node `node` is read through an anchor on, or "".
std::string anchored_on(const onnx::ModelProto& out, const std::string& node, int slot) {
  std::map<std::string, const onnx::NodeProto*> made_by;
  for (const auto& n : out.graph().node())
    for (const auto& o : n.output()) made_by[o] = &n;
  const onnx::NodeProto* reshape = made_by[node_named(out, node).input(slot)];
  if (reshape == nullptr || reshape->op_type() != "Reshape") return "";
  const onnx::NodeProto* concat = made_by[reshape->input(1)];
  const onnx::NodeProto* flat = concat ? made_by[concat->input(0)] : nullptr;
  const onnx::NodeProto* cast = flat ? made_by[flat->input(0)] : nullptr;
  const onnx::NodeProto* slice = cast ? made_by[cast->input(0)] : nullptr;
  return slice != nullptr && slice->op_type() == "Slice" ? slice->input(0) : "";
}

std::vector<std::string> names_in_order(const onnx::ModelProto& m) {
  std::vector<std::string> out;
  for (const auto& n : m.graph().node()) out.push_back(n.name());
  return out;
}

std::vector<std::string> io(const google::protobuf::RepeatedPtrField<std::string>& list) {
  return {list.begin(), list.end()};
}

std::vector<std::string> io_names(
    const google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>& list) {
  std::vector<std::string> out;
  for (const auto& v : list) out.push_back(v.name());
  return out;
}

// Without order anchors, to read the plan's own nodes; the anchors have
// their own tests below.
RewriteOptions unanchored() {
  RewriteOptions o;
  o.anchor_order = AnchorOrder::kNone;
  return o;
}

TEST(RewriteModel, SwapsAndRecomputesBecomeNodesInScheduleOrder) {
  Loaded m = load(hand_model());
  planner::Plan plan = plan_for(m.graph, swap_and_recompute(m.graph));
  onnx::ModelProto out = rewrite_model(m.proto, m.graph, plan, unanchored());

  // 9 computes + 1 SwapOut + 1 SwapIn + 2 recomputes; frees make nothing.
  EXPECT_EQ(names_in_order(out),
            (std::vector<std::string>{"mm", "a_SwapOut", "relu", "ln", "neg", "a_SwapIn", "mul",
                                      "relu_recompute", "mul2", "ln_recompute", "mul3", "sum"}));
  const auto& swap_out = node_named(out, "a_SwapOut");
  EXPECT_EQ(swap_out.domain(), kMemplanDomain);
  EXPECT_EQ(swap_out.op_type(), kSwapOutOp);
  EXPECT_EQ(io(swap_out.input()), std::vector<std::string>{"a"});
  EXPECT_EQ(io(swap_out.output()), std::vector<std::string>{"a_host"});
  const auto& swap_in = node_named(out, "a_SwapIn");
  EXPECT_EQ(io(swap_in.input()), std::vector<std::string>{"a_host"});
  EXPECT_EQ(io(swap_in.output()), std::vector<std::string>{"a_swapin"});

  // Readers before the reload read the original, readers after the copy.
  EXPECT_EQ(io(node_named(out, "relu").input()), std::vector<std::string>{"a"});
  EXPECT_EQ(io(node_named(out, "mul").input()), (std::vector<std::string>{"c", "a_swapin"}));
  EXPECT_EQ(io(node_named(out, "relu_recompute").input()), std::vector<std::string>{"a_swapin"});
  EXPECT_EQ(io(node_named(out, "relu_recompute").output()),
            std::vector<std::string>{"b_recompute"});
  EXPECT_EQ(node_named(out, "relu_recompute").doc_string(), std::string(kRecomputeDoc) + "relu");
  EXPECT_EQ(io(node_named(out, "mul2").input()), (std::vector<std::string>{"d", "b_recompute"}));
  // The clone reads the recomputed b; its unread optional Mean and
  // InvStdDev are left out, so they take no memory.
  EXPECT_EQ(io(node_named(out, "ln_recompute").input()),
            (std::vector<std::string>{"b_recompute", "scale", "bias"}));
  EXPECT_EQ(io(node_named(out, "ln_recompute").output()),
            (std::vector<std::string>{"y_recompute", "", ""}));
  EXPECT_EQ(io(node_named(out, "mul3").input()), (std::vector<std::string>{"e", "y_recompute"}));

  EXPECT_EQ(checker_problem(out), "");
  EXPECT_EQ(shape_inference_problem(out), "");
  // And memplan reads it back: the same graph plus the new nodes.
  Loaded again = load(out);
  EXPECT_EQ(again.graph.nodes().size(), 12u);
}

// A clone that reads just what its original reads keeps every output:
// ORT's common-subexpression elimination merges the two, and refused the
// model where the clone had fewer outputs (bert_base, --anchors none).
TEST(RewriteModel, ACloneOfItsOriginalsInputsKeepsItsOptionalOutputs) {
  Loaded m = load(hand_model());
  const planner::Plan plan = plan_for(
      m.graph, steps(m.graph, {{"compute", "mm"},   {"compute", "relu"}, {"compute", "ln"},
                               {"free", "mean"},    {"free", "inv"},     {"compute", "neg"},
                               {"free", "y"},       {"compute", "mul"},  {"free", "c"},
                               {"free", "a"},       {"compute", "mul2"}, {"free", "d"},
                               {"recompute", "ln"}, {"free", "mean"},    {"free", "inv"},
                               {"free", "b"},       {"compute", "mul3"}, {"free", "e"},
                               {"free", "y"},       {"compute", "sum"},  {"free", "f"}}));
  const onnx::ModelProto out = rewrite_model(m.proto, m.graph, plan, unanchored());
  EXPECT_EQ(io(node_named(out, "ln_recompute").input()),
            (std::vector<std::string>{"b", "scale", "bias"}));
  EXPECT_EQ(io(node_named(out, "ln_recompute").output()),
            (std::vector<std::string>{"y_recompute", "mean_recompute", "inv_recompute"}));
  EXPECT_EQ(checker_problem(out), "");
}

// Each reload and recompute reads its first input through a Reshape whose
// shape is built from the data of the output of the node the plan issues it
// after, so ONNX Runtime cannot run it earlier (passes/order_anchor.h).
TEST(RewriteModel, ReloadsAndRecomputesWaitForTheNodeBeforeThem) {
  Loaded m = load(hand_model());
  planner::Plan plan = plan_for(m.graph, swap_and_recompute(m.graph));
  RewriteOptions remakes;
  remakes.anchor_order = AnchorOrder::kRemakes;
  onnx::ModelProto out = rewrite_model(m.proto, m.graph, plan, remakes);
  // SwapIn after neg (c), relu's recompute after mul (d), ln's after mul2 (e).
  const std::vector<std::pair<std::string, std::string>> anchored = {
      {"a_SwapIn", "c"}, {"relu_recompute", "d"}, {"ln_recompute", "e"}};
  std::map<std::string, const onnx::NodeProto*> by_output;
  for (const auto& n : out.graph().node())
    for (const auto& o : n.output()) by_output[o] = &n;
  int checked = 0;
  for (const auto& [name, after] : anchored) {
    const onnx::NodeProto& node = node_named(out, name);
    const onnx::NodeProto* reshape = by_output.at(node.input(0));
    ASSERT_EQ(reshape->op_type(), "Reshape") << name;
    EXPECT_EQ(reshape->doc_string(), std::string(kAnchorDoc) + after);
    const onnx::NodeProto* concat = by_output.at(reshape->input(1));
    ASSERT_EQ(concat->op_type(), "Concat");
    // token(after) = Reshape(Cast(Slice(after)))
    const onnx::NodeProto* flat = by_output.at(concat->input(0));
    const onnx::NodeProto* cast = by_output.at(flat->input(0));
    const onnx::NodeProto* slice = by_output.at(cast->input(0));
    EXPECT_EQ(slice->op_type(), "Slice");
    EXPECT_EQ(slice->input(0), after) << name;
    EXPECT_EQ(by_output.at(concat->input(1))->op_type(), "Shape");
    ++checked;
  }
  EXPECT_EQ(checked, 3);
  // 12 nodes of the plan + 3 tokens of 3 nodes + 3 anchors of 3 nodes.
  EXPECT_EQ(out.graph().node_size(), 12 + 9 + 9);
  EXPECT_EQ(read_summary(out, "out")->anchors, 3u);
  EXPECT_EQ(checker_problem(out), "");
  EXPECT_EQ(shape_inference_problem(out), "");
  // memplan reads it back, anchors and all.
  EXPECT_EQ(load(out).graph.nodes().size(), 30u);
}

// With the whole order anchored, a node that does not read the output of
// the node before it waits for it too. `side = Neg(b)`, issued after ln,
// waits for ln's y; neg, issued after side, waits for side's output. Every
// other node reads an output made since its anchor.
TEST(RewriteModel, TheWholeOrderWaitsWhereNoInputOrdersIt) {
  onnx::ModelProto model = hand_model();
  test::ModelBuilder b;
  b.proto() = model;
  b.node("Neg", {"b"}, {"side"}, "side");
  b.output("side", {std::int64_t{2}, std::int64_t{4}}, 1, /*with_shape=*/true);
  Loaded m = load(b.proto());
  std::vector<Step> schedule = swap_and_recompute(m.graph);
  // side right after ln, before b is freed
  schedule.insert(schedule.begin() + 5,
                  Step{planner::StepOp::kCompute, *m.graph.find_node("side")});
  planner::Plan plan = plan_for(m.graph, schedule);
  RewriteOptions whole;
  whole.anchor_order = AnchorOrder::kAll;
  whole.min_anchored_bytes = 0;  // this graph's tensors are 32 bytes
  onnx::ModelProto all = rewrite_model(m.proto, m.graph, plan, whole);
  RewriteOptions remakes;
  remakes.anchor_order = AnchorOrder::kRemakes;
  onnx::ModelProto some = rewrite_model(m.proto, m.graph, plan, remakes);
  EXPECT_EQ(read_summary(some, "some")->anchors, 3u);
  EXPECT_EQ(read_summary(all, "all")->anchors, 5u);
  const onnx::NodeProto& side = node_named(all, "side");
  EXPECT_NE(side.input(0), "b");  // reads b through its anchor on y
  EXPECT_EQ(checker_problem(all), "");
  EXPECT_EQ(shape_inference_problem(all), "");
}

// The anchor a plain node waits for is passed on only along edges ORT must
// follow. `sink = Sigmoid(b)` is a graph output nothing reads, as a weight
// gradient's accumulator is; `t = Sum(a, a)`, listed after it, does not read
// it and so may run before it; `u = Max(t, b)` must therefore wait for sink
// itself (bert_base: ORT ran every weight-gradient product at the end of the
// backward while the gradient chain's nodes counted as ordered after them).
// A value made from initializers alone (`k = Abs(c)`, issued first), which
// ORT folds, is never an anchor: `relu0` would wait for it (swin_tiny).
TEST(RewriteModel, OnlyWhatRunsAfterTheAnchorPassesItsOrderOn) {
  test::ModelBuilder b;
  b.input("x", {std::int64_t{2}, std::int64_t{4}});
  b.input("w", {std::int64_t{4}, std::int64_t{4}});
  b.int64_constant("c", {2, 4});
  b.node("Abs", {"c"}, {"k"}, "fold");
  b.node("Exp", {"x"}, {"e"}, "exp");
  b.node("Relu", {"e"}, {"r"}, "relu0");
  b.node("MatMul", {"r", "w"}, {"a"}, "mm");
  b.node("Reshape", {"a", "k"}, {"a2"}, "reshape");
  b.node("Relu", {"a2"}, {"b"}, "relu");
  b.node("Sigmoid", {"b"}, {"sink"}, "sink");
  b.node("Sum", {"a", "a"}, {"t"}, "t");
  b.node("Max", {"t", "b"}, {"u"}, "u");
  test::set_int_attr(b.node("ReduceSum", {"u"}, {"loss"}, "sum"), "keepdims", 0);
  b.output("loss", {}, 1, /*with_shape=*/true);
  b.output("sink", {std::int64_t{2}, std::int64_t{4}}, 1, /*with_shape=*/true);
  Loaded m = load(b.proto());
  planner::Plan plan = plan_for(m.graph, steps(m.graph, {{"compute", "fold"},
                                                         {"compute", "exp"},
                                                         {"compute", "relu0"},
                                                         {"free", "e"},
                                                         {"compute", "mm"},
                                                         {"free", "r"},
                                                         {"compute", "reshape"},
                                                         {"free", "k"},
                                                         {"compute", "relu"},
                                                         {"free", "a2"},
                                                         {"compute", "sink"},
                                                         {"compute", "t"},
                                                         {"free", "a"},
                                                         {"compute", "u"},
                                                         {"free", "t"},
                                                         {"free", "b"},
                                                         {"compute", "sum"},
                                                         {"free", "u"}}));
  RewriteOptions whole;
  whole.anchor_order = AnchorOrder::kAll;
  whole.min_anchored_bytes = 0;  // this graph's tensors are 32 bytes
  onnx::ModelProto out = rewrite_model(m.proto, m.graph, plan, whole);
  EXPECT_TRUE(anchored_on(out, "u", 0) == "sink" || anchored_on(out, "u", 1) == "sink")
      << node_named(out, "u").DebugString();
  EXPECT_EQ(node_named(out, "relu0").input(0), "e");
  int slices = 0;
  for (const auto& n : out.graph().node())
    if (n.op_type() == "Slice") {
      EXPECT_NE(n.input(0), "k") << "an anchor on a folded value";
      ++slices;
    }
  EXPECT_EQ(slices, 1);
  EXPECT_EQ(checker_problem(out), "");
  EXPECT_EQ(shape_inference_problem(out), "");
}

// ORT folds a scale into a MatMul's alpha only while every reader of the
// scaled value is a MatMul: a recomputed MatMul is anchored on its other
// input, a Transpose's, not on the Mul's (swin_tiny at EXTENDED).
TEST(RewriteModel, ARemadeMatMulIsNotAnchoredOnItsScale) {
  test::ModelBuilder b;
  b.input("x", {std::int64_t{2}, std::int64_t{2}});
  b.input("s", {std::int64_t{1}});
  b.node("Mul", {"x", "s"}, {"q"}, "scale");
  b.node("Transpose", {"x"}, {"kt"}, "tr");
  b.node("MatMul", {"q", "kt"}, {"a"}, "mm");
  b.node("Relu", {"a"}, {"r"}, "relu");
  b.node("Mul", {"r", "a"}, {"m"}, "late");
  test::set_int_attr(b.node("ReduceSum", {"m"}, {"loss"}, "sum"), "keepdims", 0);
  b.output("loss", {}, 1, /*with_shape=*/true);
  Loaded m = load(b.proto());
  const planner::Plan plan = plan_for(m.graph, steps(m.graph, {{"compute", "scale"},
                                                               {"compute", "tr"},
                                                               {"compute", "mm"},
                                                               {"compute", "relu"},
                                                               {"free", "a"},
                                                               {"recompute", "mm"},
                                                               {"free", "q"},
                                                               {"free", "kt"},
                                                               {"compute", "late"},
                                                               {"free", "a"},
                                                               {"free", "r"},
                                                               {"compute", "sum"},
                                                               {"free", "m"}}));
  RewriteOptions o;
  o.min_anchored_bytes = 0;
  const onnx::ModelProto out = rewrite_model(m.proto, m.graph, plan, o);
  const onnx::NodeProto& clone = node_named(out, "mm_recompute");
  EXPECT_EQ(clone.input(0), "q") << clone.DebugString();
  EXPECT_EQ(anchored_on(out, "mm_recompute", 1), "r") << clone.DebugString();
  EXPECT_EQ(checker_problem(out), "");
}

// ORT folds a Sum of a Gemm's output (through a Transpose) into the Gemm's
// C only where that is the output's one reader and its shape is known: the
// whole-order rewrite neither anchors such a Gemm nor makes its outputs
// anchors (BERT's and GPT-2's tied embedding gradients at BASIC).
TEST(RewriteModel, AGemmThatORTFoldsASumIntoIsNeitherAnchoredNorAnAnchor) {
  test::ModelBuilder b;
  b.input("x", {std::int64_t{2}, std::int64_t{4}});
  b.input("w", {std::int64_t{4}, std::int64_t{4}});
  b.node("Exp", {"x"}, {"e"}, "exp");
  b.node("Neg", {"e"}, {"n"}, "neg");
  b.node("Gemm", {"e", "w"}, {"g"}, "gemm");
  b.node("Transpose", {"g"}, {"t"}, "tr");
  b.node("Transpose", {"n"}, {"t2"}, "tn");
  b.node("Sum", {"t", "t2"}, {"s"}, "sum");
  b.node("Transpose", {"e"}, {"te"}, "te");
  b.node("Add", {"s", "te"}, {"f"}, "add");
  test::set_int_attr(b.node("ReduceSum", {"f"}, {"loss"}, "loss"), "keepdims", 0);
  b.output("loss", {}, 1, /*with_shape=*/true);
  Loaded m = load(b.proto());
  const planner::Plan plan = plan_for(
      m.graph,
      steps(m.graph,
            {{"compute", "exp"}, {"compute", "neg"}, {"compute", "gemm"}, {"swap_out", "e"},
             {"free", "e"},      {"compute", "tr"},  {"free", "g"},       {"swap_in", "e"},
             {"compute", "tn"},  {"free", "n"},      {"compute", "sum"},  {"free", "t"},
             {"free", "t2"},     {"compute", "te"},  {"free", "e"},       {"compute", "add"},
             {"free", "s"},      {"free", "te"},     {"compute", "loss"}, {"free", "f"}}));
  RewriteOptions whole;
  whole.anchor_order = AnchorOrder::kAll;
  whole.min_anchored_bytes = 0;
  const onnx::ModelProto out = rewrite_model(m.proto, m.graph, plan, whole);
  EXPECT_EQ(node_named(out, "gemm").input(0), "e");
  int slices = 0;
  for (const auto& n : out.graph().node())
    if (n.op_type() == "Slice") {
      EXPECT_NE(n.input(0), "g") << "an anchor on the Gemm's output";
      EXPECT_NE(n.input(0), "t") << "an anchor on the Transpose the Gemm folds";
      ++slices;
    }
  EXPECT_GE(slices, 1);  // the SwapIn still waits for something
  EXPECT_EQ(checker_problem(out), "");
}

TEST(RewriteModel, SwapFunctionsAreIdentityBodiesInTheirOwnDomain) {
  Loaded m = load(hand_model());
  onnx::ModelProto out =
      rewrite_model(m.proto, m.graph, plan_for(m.graph, swap_and_recompute(m.graph)), {});
  std::set<std::string> functions;
  for (const auto& f : out.functions()) {
    EXPECT_EQ(f.domain(), kMemplanDomain);
    ASSERT_EQ(f.node_size(), 1);
    EXPECT_EQ(f.node(0).op_type(), "Identity");
    functions.insert(f.name());
  }
  EXPECT_EQ(functions, (std::set<std::string>{"SwapIn", "SwapOut"}));
  bool imported = false;
  for (const auto& op : out.opset_import())
    imported |= op.domain() == kMemplanDomain && op.version() == 1;
  EXPECT_TRUE(imported);
}

TEST(RewriteModel, SummaryGoesInMetadataBesideWhatWasThere) {
  Loaded m = load(hand_model());
  planner::Plan plan = plan_for(m.graph, swap_and_recompute(m.graph));
  RewriteOptions options;
  options.plan_sha256 = std::string(64, 'b');
  onnx::ModelProto out = rewrite_model(m.proto, m.graph, plan, options);
  ASSERT_GE(out.metadata_props_size(), 1);
  EXPECT_EQ(out.metadata_props(0).key(), "producer.note");
  auto s = read_summary(out, "out.onnx");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->plan_sha256, std::string(64, 'b'));
  EXPECT_EQ(s->model_sha256, std::string(64, 'a'));
  EXPECT_EQ(s->solver, "test");
  EXPECT_EQ(s->budget_bytes, 1u << 20);
  EXPECT_EQ(s->predicted_peak_bytes, plan.predicted.peak_bytes);
  EXPECT_EQ(s->predicted_iteration_seconds, plan.predicted.iteration_seconds);
  EXPECT_EQ(s->swap_outs, 1u);
  EXPECT_EQ(s->swap_ins, 1u);
  EXPECT_EQ(s->recomputes, 2u);

  // Without a given sha256, that of the plan as write_plan_file writes it.
  onnx::ModelProto plain = rewrite_model(m.proto, m.graph, plan, {});
  EXPECT_EQ(read_summary(plain, "x")->plan_sha256, plan_file_sha256(m.graph, plan));
  EXPECT_FALSE(read_summary(m.proto, "x"));
}

// The rewrite builds the model anew but for its nodes: every other field
// comes across, fields this ONNX does not know (a newer model's) too.
TEST(RewriteModel, EverythingButTheNodesComesAcross) {
  Loaded m = load(hand_model());
  m.proto.set_doc_string("model doc");
  m.proto.set_producer_name("exporter");
  m.proto.mutable_graph()->set_doc_string("graph doc");
  m.proto.mutable_unknown_fields()->AddVarint(99, 7);
  m.proto.mutable_graph()->mutable_unknown_fields()->AddVarint(98, 5);
  const onnx::ModelProto out =
      rewrite_model(m.proto, m.graph, plan_for(m.graph, swap_and_recompute(m.graph)), {});
  EXPECT_EQ(out.doc_string(), "model doc");
  EXPECT_EQ(out.producer_name(), "exporter");
  EXPECT_EQ(out.ir_version(), m.proto.ir_version());
  EXPECT_EQ(out.graph().name(), m.proto.graph().name());
  EXPECT_EQ(out.graph().doc_string(), "graph doc");
  EXPECT_EQ(io_names(out.graph().input()), io_names(m.proto.graph().input()));
  EXPECT_EQ(io_names(out.graph().output()), io_names(m.proto.graph().output()));
  ASSERT_EQ(out.unknown_fields().field_count(), 1);
  EXPECT_EQ(out.unknown_fields().field(0).number(), 99);
  ASSERT_EQ(out.graph().unknown_fields().field_count(), 1);
  EXPECT_EQ(out.graph().unknown_fields().field(0).varint(), 5u);
  EXPECT_GT(out.graph().node_size(), m.proto.graph().node_size());
}

TEST(RewriteModel, SameInputsGiveTheSameBytes) {
  Loaded m = load(hand_model());
  planner::Plan plan = plan_for(m.graph, swap_and_recompute(m.graph));
  std::string first, second;
  ASSERT_TRUE(rewrite_model(m.proto, m.graph, plan, {}).SerializeToString(&first));
  ASSERT_TRUE(rewrite_model(m.proto, m.graph, plan, {}).SerializeToString(&second));
  EXPECT_EQ(first, second);
}

TEST(RewriteModel, LaterReloadsAndTakenNamesGetNumbers) {
  // A model that already has a tensor named `a_swapin` (a rewritten model
  // rewritten again, say): the new copy must not reuse the name.
  onnx::ModelProto model = hand_model();
  auto* neg = model.mutable_graph()->mutable_node(3);
  neg->set_output(0, "a_swapin");
  model.mutable_graph()->mutable_node(4)->set_input(0, "a_swapin");
  Loaded m = load(model);
  // a reloaded twice: for mul, and again for relu's second recompute.
  auto plan = plan_for(
      m.graph,
      steps(m.graph,
            {{"compute", "mm"},   {"swap_out", "a"}, {"compute", "relu"},   {"free", "a"},
             {"compute", "ln"},   {"free", "b"},     {"free", "mean"},      {"free", "inv"},
             {"compute", "neg"},  {"swap_in", "a"},  {"compute", "mul"},    {"free", "a_swapin"},
             {"free", "a"},       {"swap_in", "a"},  {"recompute", "relu"}, {"free", "a"},
             {"compute", "mul2"}, {"free", "d"},     {"free", "b"},         {"compute", "mul3"},
             {"free", "e"},       {"free", "y"},     {"compute", "sum"},    {"free", "f"}}));
  onnx::ModelProto out = rewrite_model(m.proto, m.graph, plan, unanchored());
  EXPECT_EQ(io(node_named(out, "a_SwapIn").output()), std::vector<std::string>{"a_swapin_2"});
  EXPECT_EQ(io(node_named(out, "a_SwapIn_2").output()), std::vector<std::string>{"a_swapin_3"});
  EXPECT_EQ(io(node_named(out, "relu_recompute").input()), std::vector<std::string>{"a_swapin_3"});
  EXPECT_EQ(checker_problem(out), "");
}

TEST(RewriteModel, KeepEverythingGivesTheOriginalNodes) {
  Loaded m = load(hand_model());
  planner::Plan plan = plan_for(m.graph, planner::baseline_schedule(m.graph));
  onnx::ModelProto out = rewrite_model(m.proto, m.graph, plan, {});
  ASSERT_EQ(out.graph().node_size(), m.proto.graph().node_size());
  for (int i = 0; i < out.graph().node_size(); ++i)
    EXPECT_EQ(out.graph().node(i).SerializeAsString(), m.proto.graph().node(i).SerializeAsString());
  EXPECT_EQ(out.functions_size(), 0);
  for (const auto& op : out.opset_import()) EXPECT_NE(op.domain(), kMemplanDomain);
}

TEST(RewriteModel, PlanForAnotherModelIsRejected) {
  Loaded m = load(hand_model());
  planner::Plan plan = plan_for(m.graph, swap_and_recompute(m.graph));

  RewriteOptions other_sha;
  other_sha.model_sha256 = std::string(64, 'c');
  EXPECT_THROW(rewrite_model(m.proto, m.graph, plan, other_sha), InvalidPlanError);

  planner::Plan fewer = plan;
  fewer.tensor_bytes.pop_back();
  EXPECT_THROW(rewrite_model(m.proto, m.graph, fewer, {}), InvalidPlanError);

  // A graph loaded from another model does not match the proto.
  test::ModelBuilder small;
  small.input("x", {std::int64_t{2}, std::int64_t{4}});
  test::set_int_attr(small.node("ReduceSum", {"x"}, {"loss"}, "sum"), "keepdims", 0);
  small.output("loss", {}, 1, /*with_shape=*/true);
  Loaded other = load(small.proto());
  EXPECT_THROW(rewrite_model(other.proto, m.graph, plan, {}), InputError);
}

TEST(RewriteModel, StepRulesAreChecked) {
  Loaded m = load(hand_model());
  // mul reads a after it was freed and never brought back.
  auto bad = plan_for(m.graph, swap_and_recompute(m.graph));
  bad.schedule.erase(bad.schedule.begin() + 10);  // the swap_in of a
  try {
    rewrite_model(m.proto, m.graph, bad, {});
    FAIL() << "expected InvalidPlanError";
  } catch (const InvalidPlanError& e) {
    EXPECT_NE(std::string(e.what()).find("'a' is not resident"), std::string::npos) << e.what();
  }
  // A node without a compute step.
  auto missing = plan_for(m.graph, swap_and_recompute(m.graph));
  missing.schedule.erase(missing.schedule.end() - 2, missing.schedule.end());
  EXPECT_THROW(rewrite_model(m.proto, m.graph, missing, {}), InvalidPlanError);
}

TEST(RewriteModel, RandomNodesAreNeverCloned) {
  test::ModelBuilder b;
  b.input("x", {std::int64_t{2}, std::int64_t{4}});
  b.node("Dropout", {"x"}, {"y"}, "drop");
  b.node("Neg", {"y"}, {"c"}, "neg");
  b.node("Mul", {"c", "y"}, {"d"}, "mul");
  test::set_int_attr(b.node("ReduceSum", {"d"}, {"loss"}, "sum"), "keepdims", 0);
  b.output("loss", {}, 1, /*with_shape=*/true);
  Loaded m = load(b.proto());
  auto plan = plan_for(m.graph, steps(m.graph, {{"compute", "drop"},
                                                {"compute", "neg"},
                                                {"free", "y"},
                                                {"recompute", "drop"},
                                                {"compute", "mul"},
                                                {"compute", "sum"}}));
  EXPECT_THROW(rewrite_model(m.proto, m.graph, plan, {}), InvalidPlanError);
}

}  // namespace
}  // namespace memplan::passes
