// Shapes of the forward ops ONNX Runtime substitutes in training graphs
// (ConcatTraining, SplitTraining, LSTMTraining, GRUTraining, its own
// LayerNormalization below opset 17) and of their gradients.
#include <gtest/gtest.h>

#include "ir/onnx_loader.h"
#include "support/model_builder.h"

namespace memplan::ir {
namespace {

using test::ModelBuilder;
using Shape = std::vector<std::int64_t>;
constexpr const char* kMs = "com.microsoft";

Graph load(ModelBuilder& b) { return load_model(b.write("ort_ops"), {}).graph; }
Shape shape(const Graph& g, const char* t) { return g.tensor(*g.find_tensor(t)).shape; }
std::int32_t elem(const Graph& g, const char* t) { return g.tensor(*g.find_tensor(t)).elem_type; }
Shape dims(std::initializer_list<std::int64_t> d) { return d; }

void add_input(ModelBuilder& b, const char* name, Shape d, int elem_type = 1) {
  std::vector<test::Dim> v(d.begin(), d.end());
  b.input(name, v, elem_type);
}

TEST(OrtSubstitutedOps, ConcatTrainingThenSplitTrainingByItsLengths) {
  ModelBuilder b(15);
  add_input(b, "a", {2, 3, 8});
  add_input(b, "c", {2, 5, 8});
  auto& cat = b.node("ConcatTraining", {"a", "c"}, {"y", "len"}, "", kMs);
  test::set_int_attr(cat, "axis", 1);
  auto& split = b.node("SplitTraining", {"y", "len"}, {"ga", "gc"}, "", kMs);
  test::set_int_attr(split, "axis", 1);
  b.output("ga").output("gc");
  Graph g = load(b);
  EXPECT_EQ(shape(g, "y"), dims({2, 8, 8}));
  EXPECT_EQ(shape(g, "len"), dims({2}));
  EXPECT_EQ(elem(g, "len"), 7);
  EXPECT_EQ(shape(g, "ga"), dims({2, 3, 8}));
  EXPECT_EQ(shape(g, "gc"), dims({2, 5, 8}));
}

TEST(OrtSubstitutedOps, LayerNormalizationBelowOpset17HasStatistics) {
  ModelBuilder b(15);
  add_input(b, "x", {4, 6, 16});
  add_input(b, "scale", {16});
  add_input(b, "bias", {16});
  b.node("LayerNormalization", {"x", "scale", "bias"}, {"y", "mean", "inv"});
  b.output("y").output("mean").output("inv");
  Graph g = load(b);
  EXPECT_EQ(shape(g, "y"), dims({4, 6, 16}));
  EXPECT_EQ(shape(g, "mean"), dims({4, 6, 1}));
  EXPECT_EQ(shape(g, "inv"), dims({4, 6, 1}));
  EXPECT_EQ(elem(g, "inv"), 1);
}

TEST(OrtSubstitutedOps, LstmTrainingAndGrad) {
  ModelBuilder b(15);
  add_input(b, "x", {7, 2, 5});   // [seq, batch, input]
  add_input(b, "w", {1, 12, 5});  // [dirs, 4 * hidden, input]
  add_input(b, "r", {1, 12, 3});
  add_input(b, "bias", {1, 24});
  b.node("LSTMTraining", {"x", "w", "r", "bias"}, {"hall", "hf", "cf", "call", "iofc"}, "", kMs);
  b.node("Relu", {"hall"}, {"dhall"});
  b.node("LSTMGrad", {"x", "w", "r", "", "", "", "hall", "call", "iofc", "dhall"},
         {"dx", "dw", "dr", "db", "dh0", "dc0"}, "", kMs);
  b.output("dx")
      .output("dw")
      .output("dr")
      .output("db")
      .output("dh0")
      .output("dc0")
      .output("hf")
      .output("cf");
  Graph g = load(b);
  EXPECT_EQ(shape(g, "hall"), dims({7, 1, 2, 3}));
  EXPECT_EQ(shape(g, "hf"), dims({1, 2, 3}));
  EXPECT_EQ(shape(g, "cf"), dims({1, 2, 3}));
  EXPECT_EQ(shape(g, "call"), dims({7, 1, 2, 3}));
  EXPECT_EQ(shape(g, "iofc"), dims({7, 1, 2, 12}));
  EXPECT_EQ(shape(g, "dx"), dims({7, 2, 5}));
  EXPECT_EQ(shape(g, "dw"), dims({1, 12, 5}));
  EXPECT_EQ(shape(g, "dr"), dims({1, 12, 3}));
  EXPECT_EQ(shape(g, "db"), dims({1, 24}));
  EXPECT_EQ(shape(g, "dh0"), dims({1, 2, 3}));
  EXPECT_EQ(shape(g, "dc0"), dims({1, 2, 3}));
}

TEST(OrtSubstitutedOps, BidirectionalGruTrainingAndGrad) {
  ModelBuilder b(15);
  add_input(b, "x", {4, 3, 6});
  add_input(b, "w", {2, 15, 6});  // [dirs, 3 * hidden, input], hidden 5
  add_input(b, "r", {2, 15, 5});
  auto& gru = b.node("GRUTraining", {"x", "w", "r"}, {"hall", "hf", "zrh"}, "", kMs);
  test::set_int_attr(gru, "hidden_size", 5);
  auto& grad = b.node("GRUGrad", {"x", "w", "r", "", "", "", "hall", "zrh", "hall"},
                      {"dx", "dw", "dr", "db", "dh0"}, "", kMs);
  test::set_int_attr(grad, "hidden_size", 5);
  b.output("dx").output("dw").output("dr").output("db").output("dh0").output("hf");
  Graph g = load(b);
  EXPECT_EQ(shape(g, "hall"), dims({4, 2, 3, 5}));
  EXPECT_EQ(shape(g, "hf"), dims({2, 3, 5}));
  EXPECT_EQ(shape(g, "zrh"), dims({4, 2, 3, 15}));
  EXPECT_EQ(shape(g, "dx"), dims({4, 3, 6}));
  EXPECT_EQ(shape(g, "db"), dims({2, 30}));
  EXPECT_EQ(shape(g, "dh0"), dims({2, 3, 5}));
}

TEST(OrtSubstitutedOps, ConvTransposeAndResizeGradients) {
  ModelBuilder b(15);
  add_input(b, "dy", {1, 6, 8, 8});
  add_input(b, "x", {1, 4, 4, 4});
  add_input(b, "w", {4, 3, 2, 2});  // [C_in, C_out / group, k, k], group 2
  auto& n = b.node("ConvTransposeGrad", {"dy", "x", "w"}, {"dx", "dw", "db"}, "", kMs);
  test::set_int_attr(n, "group", 2);
  b.node("ResizeGrad", {"dy", "x"}, {"rx"}, "", kMs);
  b.output("dx").output("dw").output("db").output("rx");
  Graph g = load(b);
  EXPECT_EQ(shape(g, "dx"), dims({1, 4, 4, 4}));
  EXPECT_EQ(shape(g, "dw"), dims({4, 3, 2, 2}));
  EXPECT_EQ(shape(g, "db"), dims({6}));
  EXPECT_EQ(shape(g, "rx"), dims({1, 4, 4, 4}));
}

}  // namespace
}  // namespace memplan::ir
