// Shapes of ONNX Runtime training ops, from our rules in ONNX inference.
#include <gtest/gtest.h>

#include "ir/onnx_loader.h"
#include "support/model_builder.h"

namespace memplan::ir {
namespace {

using test::ModelBuilder;
using Shape = std::vector<std::int64_t>;
constexpr const char* kMs = "com.microsoft";

Graph load(ModelBuilder& b) { return load_model(b.write("ops"), {}).graph; }
Shape shape(const Graph& g, const char* t) { return g.tensor(*g.find_tensor(t)).shape; }

TEST(TrainingOpShapes, ElementwiseGradsTakeTheirInputShape) {
  ModelBuilder b;
  b.input("dy", {std::int64_t{2}, std::int64_t{8}}).input("x", {std::int64_t{2}, std::int64_t{8}});
  b.node("ReluGrad", {"dy", "x"}, {"dx"}, "", kMs);
  b.node("GeluGrad", {"dx", "x"}, {"dx2"}, "", kMs);
  b.node("SoftmaxGrad_13", {"dx2", "x"}, {"dx3"}, "", kMs);
  b.output("dx3");
  Graph g = load(b);
  EXPECT_EQ(shape(g, "dx"), (Shape{2, 8}));
  EXPECT_EQ(shape(g, "dx3"), (Shape{2, 8}));
  EXPECT_EQ(g.tensor(*g.find_tensor("dx3")).bytes, 64u);
}

TEST(TrainingOpShapes, LayerNormGradShapesLikeXAndScale) {
  ModelBuilder b;
  b.input("dy", {std::int64_t{4}, std::int64_t{16}})
      .input("x", {std::int64_t{4}, std::int64_t{16}});
  b.input("scale", {std::int64_t{16}}).input("mean", {std::int64_t{4}, std::int64_t{1}});
  b.input("inv", {std::int64_t{4}, std::int64_t{1}});
  b.node("LayerNormalizationGrad", {"dy", "x", "scale", "mean", "inv"}, {"dx", "dscale", "dbias"},
         "", kMs);
  b.output("dx").output("dscale").output("dbias");
  Graph g = load(b);
  EXPECT_EQ(shape(g, "dx"), (Shape{4, 16}));
  EXPECT_EQ(shape(g, "dscale"), (Shape{16}));
  EXPECT_EQ(shape(g, "dbias"), (Shape{16}));
}

TEST(TrainingOpShapes, FusedMatMulTransposesAndBroadcasts) {
  ModelBuilder b;
  b.input("a", {std::int64_t{7}, std::int64_t{3}, std::int64_t{2}})
      .input("b", {std::int64_t{3}, std::int64_t{5}});
  auto& n = b.node("FusedMatMul", {"a", "b"}, {"c"}, "", kMs);
  test::set_int_attr(n, "transA", 1);  // a: [7,3,2] -> [7,2,3]
  b.output("c");
  EXPECT_EQ(shape(load(b), "c"), (Shape{7, 2, 5}));
}

TEST(TrainingOpShapes, LossAndAccumulator) {
  ModelBuilder b;
  b.input("logits", {std::int64_t{4}, std::int64_t{10}}).input("labels", {std::int64_t{4}}, 7);
  b.input("buf", {std::int64_t{10}}).input("g", {std::int64_t{10}});
  test::set_string_attr(
      b.node("SoftmaxCrossEntropyLossInternal", {"logits", "labels"}, {"loss", "logp"}, "", kMs),
      "reduction", "mean");
  b.node("InPlaceAccumulatorV2", {"buf", "g"}, {"flag"}, "", kMs);
  b.output("loss").output("logp").output("flag");
  Graph g = load(b);
  EXPECT_EQ(shape(g, "loss"), Shape{});
  EXPECT_EQ(g.tensor(*g.find_tensor("loss")).bytes, 4u);
  EXPECT_EQ(shape(g, "logp"), (Shape{4, 10}));
  EXPECT_EQ(shape(g, "flag"), Shape{1});
  EXPECT_EQ(g.tensor(*g.find_tensor("flag")).bytes, 1u);  // bool
}

TEST(TrainingOpShapes, ConvGradAndGradNamingFallback) {
  ModelBuilder b;
  b.input("dy", {std::int64_t{1}, std::int64_t{8}, std::int64_t{4}, std::int64_t{4}});
  b.input("x", {std::int64_t{1}, std::int64_t{3}, std::int64_t{6}, std::int64_t{6}});
  b.input("w", {std::int64_t{8}, std::int64_t{3}, std::int64_t{3}, std::int64_t{3}});
  b.input("p", {std::int64_t{1}, std::int64_t{8}, std::int64_t{8}, std::int64_t{8}});
  b.input("idx", {std::int64_t{1}, std::int64_t{8}, std::int64_t{4}, std::int64_t{4}}, 7);
  b.node("ConvGrad", {"dy", "x", "w"}, {"x_grad", "w_grad", "b_grad"}, "", kMs);
  // No rule for MaxPoolGrad: its output "p_grad" takes p's shape by name.
  b.node("MaxPoolGrad", {"dy", "idx"}, {"p_grad"}, "", kMs);
  b.output("x_grad").output("w_grad").output("b_grad").output("p_grad");
  Graph g = load(b);
  EXPECT_EQ(shape(g, "x_grad"), (Shape{1, 3, 6, 6}));
  EXPECT_EQ(shape(g, "w_grad"), (Shape{8, 3, 3, 3}));
  EXPECT_EQ(shape(g, "b_grad"), Shape{8});
  EXPECT_EQ(shape(g, "p_grad"), (Shape{1, 8, 8, 8}));
}

TEST(TrainingOpShapes, PartialGradientsTakeTheForwardShapeByName) {
  ModelBuilder b;
  b.input("p", {std::int64_t{2}, std::int64_t{5}}).input("dy", {std::int64_t{3}});
  // Neither op has a rule; ONNX Runtime names partial gradients X_grad_<n>.
  b.node("Unknown", {"dy"}, {"p_grad_0"}, "", "com.example");
  b.node("Unknown", {"dy"}, {"p_grad_12"}, "", "com.example");
  b.node("Sum", {"p_grad_0", "p_grad_12"}, {"p_grad"});
  b.output("p_grad");
  Graph g = load(b);
  EXPECT_EQ(shape(g, "p_grad_0"), (Shape{2, 5}));
  EXPECT_EQ(shape(g, "p_grad_12"), (Shape{2, 5}));
  EXPECT_EQ(shape(g, "p_grad"), (Shape{2, 5}));
}

}  // namespace
}  // namespace memplan::ir
