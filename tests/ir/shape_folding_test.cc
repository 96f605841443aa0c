// Computed shapes (Shape -> Gather -> Div -> ConcatTraining -> Reshape, as
// PyTorch exports and ONNX Runtime rewrites them) are folded to constants,
// so every tensor downstream is sized; what still cannot be sized is named
// by op type.
#include "ir/shape_folding.h"

#include <gtest/gtest.h>

#include "ir/onnx_loader.h"
#include "support/model_builder.h"
#include "util/errors.h"

namespace memplan::ir {
namespace {

using test::ModelBuilder;
using Shape = std::vector<std::int64_t>;
constexpr const char* kMs = "com.microsoft";

Shape shape(const Graph& g, const char* t) { return g.tensor(*g.find_tensor(t)).shape; }

void scalar(ModelBuilder& b, const char* name, std::int64_t value) {
  auto* t = b.proto().mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::INT64);
  t->add_int64_data(value);
}

// x [batch, seq, 32] viewed as [batch, seq, 4, 32 / 4] through computed dims.
ModelBuilder split_heads_model() {
  ModelBuilder b(15);
  b.input("x", {std::string("batch"), std::string("seq"), std::int64_t{32}});
  scalar(b, "i0", 0);
  scalar(b, "i1", 1);
  scalar(b, "i2", 2);
  b.int64_constant("heads", {4}).int64_constant("axes0", {0});
  b.node("Shape", {"x"}, {"s"});
  b.node("Gather", {"s", "i0"}, {"b0"});
  b.node("Gather", {"s", "i1"}, {"s1"});
  b.node("Gather", {"s", "i2"}, {"h"});
  b.node("Div", {"h", "heads"}, {"d"});  // scalar / [1] -> [1]
  b.node("Unsqueeze", {"b0", "axes0"}, {"ub"});
  b.node("Unsqueeze", {"s1", "axes0"}, {"us"});
  auto& cat =
      b.node("ConcatTraining", {"ub", "us", "heads", "d"}, {"target", "lengths"}, "cat", kMs);
  test::set_int_attr(cat, "axis", 0);
  b.node("Reshape", {"x", "target"}, {"y"});
  b.node("Relu", {"y"}, {"z"});
  b.output("z");
  return b;
}

TEST(ShapeFolding, ComputedReshapeTargetsAreSized) {
  ModelBuilder b = split_heads_model();
  LoadOptions options;
  options.dims = {{"batch", 3}, {"seq", 5}};
  Graph g = load_model(b.write("fold"), options).graph;
  EXPECT_EQ(shape(g, "target"), (Shape{4}));
  EXPECT_EQ(shape(g, "lengths"), (Shape{4}));
  EXPECT_EQ(shape(g, "y"), (Shape{3, 5, 4, 8}));
  EXPECT_EQ(shape(g, "z"), (Shape{3, 5, 4, 8}));
  EXPECT_EQ(g.tensor(*g.find_tensor("z")).bytes, 3u * 5 * 32 * 4);
  // The folded nodes stay in memplan's graph: only inference's copy changes.
  EXPECT_EQ(g.nodes().size(), 10u);
}

TEST(ShapeFolding, FoldsInOrderAndReplacesNodesByInitializers) {
  ModelBuilder b = split_heads_model();
  onnx::GraphProto graph = b.proto().graph();
  // x's dims as inference would know them once batch and seq are bound.
  onnx::TypeProto x;
  x.mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  for (int64_t d : {3, 5, 32})
    x.mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(d);
  const int folded = fold_small_constants(
      graph, [&](std::string_view name) { return name == "x" ? &x : nullptr; });
  EXPECT_EQ(folded, 8);  // everything but Reshape and Relu
  ASSERT_EQ(graph.node_size(), 2);
  EXPECT_EQ(graph.node(0).op_type(), "Reshape");
  const onnx::TensorProto* target = nullptr;
  for (const auto& t : graph.initializer())
    if (t.name() == "target") target = &t;
  ASSERT_NE(target, nullptr);
  EXPECT_EQ(Shape(target->int64_data().begin(), target->int64_data().end()), (Shape{3, 5, 4, 8}));
}

TEST(ShapeFolding, NothingToFoldWithoutKnownShapes) {
  ModelBuilder b = split_heads_model();
  onnx::GraphProto graph = b.proto().graph();
  EXPECT_EQ(fold_small_constants(graph, [](std::string_view) { return nullptr; }), 0);
  EXPECT_EQ(graph.node_size(), 10);
}

// Each block's target shape comes from the last block's output, as in
// ShuffleNet's channel shuffles: inference learns one block per round, so a
// deep chain needs many rounds (16 once cut ShuffleNetV2 off after 16).
TEST(ShapeFolding, ADeepChainOfComputedShapesResolvesBlockByBlock) {
  constexpr int kBlocks = 40;
  ModelBuilder b(15);
  b.input("h0", {std::string("batch"), std::int64_t{4}, std::int64_t{6}});
  scalar(b, "i0", 0);
  b.int64_constant("axes0", {0}).int64_constant("rest", {-1});
  for (int i = 0; i < kBlocks; ++i) {
    const std::string k = std::to_string(i), h = "h" + k, next = "h" + std::to_string(i + 1);
    b.node("Shape", {h}, {"s" + k});
    b.node("Gather", {"s" + k, "i0"}, {"g" + k});
    b.node("Unsqueeze", {"g" + k, "axes0"}, {"u" + k});
    auto& cat = b.node("ConcatTraining", {"u" + k, "rest"}, {"t" + k, "l" + k}, "", kMs);
    test::set_int_attr(cat, "axis", 0);
    b.node("Reshape", {h, "t" + k}, {"r" + k});  // [batch, 24]
    b.node("Relu", {"r" + k}, {next});
  }
  b.output("h" + std::to_string(kBlocks));
  LoadOptions options;
  options.dims = {{"batch", 3}};
  Graph g = load_model(b.write("deep"), options).graph;
  EXPECT_EQ(shape(g, "h1"), (Shape{3, 24}));
  EXPECT_EQ(shape(g, ("h" + std::to_string(kBlocks)).c_str()), (Shape{3, 24}));
}

TEST(ShapeFolding, UnsizedTensorsAreReportedByOpTypeWithCounts) {
  ModelBuilder b;
  b.input("x", {std::int64_t{2}, std::int64_t{8}});
  b.node("Mystery", {"x"}, {"m1"}, "first_mystery", "com.example");
  b.node("Mystery", {"m1"}, {"m2"}, "second_mystery", "com.example");
  b.node("Relu", {"m2"}, {"r"}, "relu");
  b.output("r");
  try {
    load_model(b.write("unsized"), {});
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("cannot size 3 tensor(s)"), std::string::npos) << msg;
    EXPECT_NE(msg.find("Mystery x2 (first 'm1' of node 'first_mystery')"), std::string::npos)
        << msg;
    EXPECT_NE(msg.find("Relu x1 (first 'r' of node 'relu')"), std::string::npos) << msg;
    EXPECT_LT(msg.find("Mystery"), msg.find("Relu")) << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << "one line";
  }
}

}  // namespace
}  // namespace memplan::ir
