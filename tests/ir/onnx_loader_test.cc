#include "ir/onnx_loader.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <string>

#include "support/model_builder.h"
#include "util/errors.h"

namespace memplan::ir {
namespace {

using test::ModelBuilder;

// x[batch,4] -> MatMul(w) -> y -> Relu -> r -> ReduceSum -> objective (scalar)
// backward by hand: tx = Transpose(x), mask = Sign(r), dw = MatMul(tx, mask).
ModelBuilder tiny_training_graph() {
  ModelBuilder b;
  b.input("x", {"batch", std::int64_t{4}}).input("w", {std::int64_t{4}, std::int64_t{8}});
  b.node("MatMul", {"x", "w"}, {"y"}, "fwd_matmul");
  b.node("Relu", {"y"}, {"r"}, "fwd_relu");
  test::set_int_attr(b.node("ReduceSum", {"r"}, {"objective"}, "fwd_sum"), "keepdims", 0);
  b.node("Transpose", {"x"}, {"tx"}, "bwd_transpose");
  b.node("Sign", {"r"}, {"mask"}, "bwd_sign");
  b.node("MatMul", {"tx", "mask"}, {"dw"}, "bwd_matmul");
  b.output("objective").output("dw");
  return b;
}

LoadOptions batch(std::int64_t n) {
  LoadOptions o;
  o.dims["batch"] = n;
  return o;
}

TEST(OnnxLoader, BindsDimsAndInfersShapes) {
  auto path = tiny_training_graph().write("tiny");
  LoadedModel m = load_model(path, batch(2));
  const Graph& g = m.graph;
  EXPECT_EQ(g.nodes().size(), 6u);
  EXPECT_EQ(g.tensors().size(), 8u);
  EXPECT_EQ(m.sha256.size(), 64u);
  // float32: x 2*4*4 = 32 B, y 2*8*4 = 64 B, dw 4*8*4 = 128 B, objective 4 B.
  EXPECT_EQ(g.tensor(*g.find_tensor("x")).bytes, 32u);
  EXPECT_EQ(g.tensor(*g.find_tensor("y")).bytes, 64u);
  EXPECT_EQ(g.tensor(*g.find_tensor("dw")).bytes, 128u);
  EXPECT_EQ(g.tensor(*g.find_tensor("objective")).bytes, 4u);
  EXPECT_EQ(g.tensor(*g.find_tensor("tx")).shape, (std::vector<std::int64_t>{4, 2}));
}

TEST(OnnxLoader, WiresProducersAndConsumers) {
  LoadedModel m = load_model(tiny_training_graph().write("tiny"), batch(2));
  const Graph& g = m.graph;
  const Tensor& r = g.tensor(*g.find_tensor("r"));
  EXPECT_EQ(g.node(r.producer).name, "fwd_relu");
  ASSERT_EQ(r.consumers.size(), 2u);
  EXPECT_EQ(g.node(r.consumers[0]).name, "fwd_sum");
  EXPECT_EQ(g.node(r.consumers[1]).name, "bwd_sign");
  EXPECT_TRUE(g.tensor(*g.find_tensor("x")).is_graph_input);
  EXPECT_TRUE(g.tensor(*g.find_tensor("dw")).is_graph_output);
}

TEST(OnnxLoader, NamesUnnamedAndDuplicateNodes) {
  ModelBuilder b;
  b.input("x", {std::int64_t{2}});
  b.node("Relu", {"x"}, {"a"});
  b.node("Relu", {"a"}, {"b"});
  b.node("Neg", {"b"}, {"c"}, "same");
  b.node("Neg", {"c"}, {"d"}, "same");
  b.output("d");
  LoadedModel m = load_model(b.write("names"), {});
  EXPECT_EQ(m.graph.node(0).name, "Relu_0");
  EXPECT_EQ(m.graph.node(1).name, "Relu_1");
  EXPECT_EQ(m.graph.node(2).name, "same");
  EXPECT_EQ(m.graph.node(3).name, "same_3");
}

TEST(OnnxLoader, ReordersANonTopologicalOrder) {
  ModelBuilder b;
  b.input("x", {std::int64_t{2}});
  b.node("Neg", {"a"}, {"b"}, "second");
  b.node("Relu", {"x"}, {"a"}, "first");
  b.output("b");
  LoadedModel m = load_model(b.write("order"), {});
  EXPECT_EQ(m.graph.node(0).name, "first");
  EXPECT_EQ(m.graph.node(1).name, "second");
  EXPECT_FALSE(m.warnings.empty());
}

TEST(OnnxLoader, SubgraphCapturesCountAsReads) {
  ModelBuilder b;
  b.input("x", {std::int64_t{2}}).input("cond", {}, 9);
  b.node("Relu", {"x"}, {"a"}, "make_a");
  auto& ifn = b.node("If", {"cond"}, {"out"}, "branch");
  for (const char* attr : {"then_branch", "else_branch"}) {
    auto* a = ifn.add_attribute();
    a->set_name(attr);
    a->set_type(onnx::AttributeProto::GRAPH);
    auto* sub = a->mutable_g();
    sub->set_name(attr);
    auto* n = sub->add_node();
    n->set_op_type("Neg");
    n->add_input("a");
    n->add_output(std::string(attr) + "_out");
    auto* o = sub->add_output();
    o->set_name(std::string(attr) + "_out");
    o->mutable_type()->mutable_tensor_type()->set_elem_type(1);
    o->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(2);
  }
  b.output("out");
  LoadedModel m = load_model(b.write("if"), {});
  const Tensor& a = m.graph.tensor(*m.graph.find_tensor("a"));
  ASSERT_EQ(a.consumers.size(), 1u);
  EXPECT_EQ(m.graph.node(a.consumers[0]).name, "branch");
}

// ---- bad input: one InputError naming what is wrong ----

std::string error_of(const std::string& path, const LoadOptions& options = {}) {
  try {
    load_model(path, options);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(OnnxLoaderBadInput, MissingFile) {
  auto msg = error_of("/nonexistent/model.onnx");
  EXPECT_NE(msg.find("/nonexistent/model.onnx: no such file"), std::string::npos) << msg;
}

TEST(OnnxLoaderBadInput, EmptyFile) {
  auto path = test::write_temp("empty.onnx", "");
  EXPECT_NE(error_of(path).find("empty file"), std::string::npos);
}

TEST(OnnxLoaderBadInput, NotOnnx) {
  auto path = test::write_temp("text.onnx", "this is a text file, not a model\n");
  auto msg = error_of(path);
  EXPECT_NE(msg.find(path), std::string::npos) << msg;
  EXPECT_NE(msg.find("model"), std::string::npos) << msg;
}

TEST(OnnxLoaderBadInput, Truncated) {
  std::string bytes;
  tiny_training_graph().proto().SerializeToString(&bytes);
  auto path = test::write_temp("cut.onnx", bytes.substr(0, bytes.size() / 2));
  auto msg = error_of(path, batch(2));
  EXPECT_NE(msg.find(path), std::string::npos) << msg;
}

TEST(OnnxLoaderBadInput, Cycle) {
  ModelBuilder b;
  b.input("x", {std::int64_t{2}});
  b.node("Add", {"x", "b"}, {"a"}, "node_a");
  b.node("Relu", {"a"}, {"b"}, "node_b");
  b.output("a");
  auto msg = error_of(b.write("cycle"));
  EXPECT_NE(msg.find("cycle through node"), std::string::npos) << msg;
}

TEST(OnnxLoaderBadInput, ReadsATensorNothingMakes) {
  ModelBuilder b;
  b.input("x", {std::int64_t{2}});
  b.node("Add", {"x", "ghost"}, {"a"}, "adder");
  b.output("a");
  auto msg = error_of(b.write("ghost"));
  EXPECT_NE(msg.find("node 'adder' (Add) reads tensor 'ghost'"), std::string::npos) << msg;
}

TEST(OnnxLoaderBadInput, TwoNodesMakeOneTensor) {
  ModelBuilder b;
  b.input("x", {std::int64_t{2}});
  b.node("Relu", {"x"}, {"a"}, "one");
  b.node("Neg", {"x"}, {"a"}, "two");
  b.output("a");
  auto msg = error_of(b.write("twice"));
  EXPECT_NE(msg.find("tensor 'a' is made by two nodes: 'one' and 'two'"), std::string::npos) << msg;
}

TEST(OnnxLoaderBadInput, UnboundDimsAreListedWithTheFlag) {
  ModelBuilder b;
  b.input("ids", {"batch", "seq"});
  b.node("Relu", {"ids"}, {"a"});
  b.output("a");
  auto msg = error_of(b.write("unbound"));
  EXPECT_NE(msg.find("symbolic dims not bound: batch seq"), std::string::npos) << msg;
  EXPECT_NE(msg.find("--dim batch=N --dim seq=N"), std::string::npos) << msg;
}

TEST(OnnxLoaderBadInput, NegativeDim) {
  ModelBuilder b;
  b.input("x", {std::int64_t{-3}});
  b.node("Relu", {"x"}, {"a"});
  b.output("a");
  auto msg = error_of(b.write("negative"));
  EXPECT_NE(msg.find("tensor 'x' has negative dim -3"), std::string::npos) << msg;
}

TEST(OnnxLoaderBadInput, ByteSizeOverflow) {
  ModelBuilder b;
  // 2^31 * 2^31 * 4 bytes = 2^64: one past what 64 bits hold.
  b.input("x", {std::int64_t{1} << 31, std::int64_t{1} << 31});
  b.node("Relu", {"x"}, {"a"});
  b.output("a");
  auto msg = error_of(b.write("overflow"));
  EXPECT_NE(msg.find("overflows 64 bits"), std::string::npos) << msg;
}

TEST(OnnxLoaderBadInput, UnknownShapeNamesTensorAndOp) {
  ModelBuilder b;
  b.input("x", {std::int64_t{2}});
  b.node("MysteryOp", {"x"}, {"m"}, "mystery", "com.example");
  b.node("Relu", {"m"}, {"out"}, "after");
  b.output("out");
  auto path = b.write("mystery");
  auto msg = error_of(path);
  EXPECT_NE(msg.find("MysteryOp x1 (first 'm' of node 'mystery')"), std::string::npos) << msg;

  // A costs-file size override makes it loadable; Relu's output stays unknown
  // then, so both are given.
  LoadOptions o;
  o.tensor_bytes["m"] = 100;
  o.tensor_bytes["out"] = 100;
  LoadedModel m = load_model(path, o);
  EXPECT_EQ(m.graph.tensor(*m.graph.find_tensor("m")).bytes, 100u);
}

// The overrides of a costs file still being read: asked for once, before
// the fork of shape inference, and what the question throws, the load throws.
TEST(OnnxLoader, LateSizeOverridesAreAskedForOnceAndTheirErrorPropagates) {
  ModelBuilder b;
  b.input("x", {std::int64_t{2}});
  b.node("MysteryOp", {"x"}, {"m"}, "mystery", "com.example");
  b.output("m");
  const std::string path = b.write("mystery_late");
  LoadOptions o;
  o.tensor_bytes["m"] = 1;  // not used: the late overrides take its place
  int asked = 0;
  o.tensor_bytes_later = [&] {
    ++asked;
    return std::map<std::string, std::uint64_t>{{"m", 100}};
  };
  LoadedModel m = load_model(path, o);
  EXPECT_EQ(m.graph.tensor(*m.graph.find_tensor("m")).bytes, 100u);
  EXPECT_EQ(asked, 1);

  o.tensor_bytes_later = []() -> std::map<std::string, std::uint64_t> {
    throw InputError("costs.json: nodes.x.seconds: negative value -1");
  };
  try {
    load_model(path, o);
    FAIL() << "loaded";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "costs.json: nodes.x.seconds: negative value -1");
  }
}

// An int64 scalar whose only value sits in string_data holds no int64: it
// loads as a data-less initializer (a typed input for inference), not as a
// value ONNX 1.12's Range inference reads past the end of (fuzzer finding).
TEST(OnnxLoader, DataInAFieldOfAnotherTypeCountsAsNoData) {
  ModelBuilder b;
  b.int64_constant("start", {0}).int64_constant("delta", {1});
  b.initializer("limit", {}, 7);
  for (auto& t : *b.proto().mutable_graph()->mutable_initializer())
    if (t.name() == "limit") t.add_string_data("\x02");
  b.node("Range", {"start", "limit", "delta"}, {"r"}, "range");
  b.node("Cast", {"r"}, {"f"}, "cast");
  b.output("f");
  LoadOptions o;
  o.tensor_bytes["r"] = 16;
  o.tensor_bytes["f"] = 16;
  o.shape_inference.isolated = false;  // a crash would end this test, not pass it
  LoadedModel m = load_model(b.write("mistyped_scalar"), o);
  const Tensor& limit = m.graph.tensor(*m.graph.find_tensor("limit"));
  EXPECT_TRUE(limit.is_initializer);
  EXPECT_EQ(limit.elem_type, 7);
}

TEST(OnnxLoaderBadInput, NegativeDimFlagIsAUsageError) {
  LoadOptions o;
  o.dims["batch"] = -1;
  EXPECT_THROW(load_model(tiny_training_graph().write("tiny"), o), UsageError);
}

}  // namespace
}  // namespace memplan::ir
