#include "ir/classify.h"

#include <gtest/gtest.h>

#include "ir/onnx_loader.h"
#include "support/model_builder.h"
#include "util/errors.h"

namespace memplan::ir {
namespace {

using test::ModelBuilder;

// A generic training graph of standard ops with arbitrary names: nothing
// in it follows ONNX Runtime's naming.
//   forward:  y = MatMul(x, w); r = Relu(y); objective = ReduceSum(r)
//   backward: tx = Transpose(x); mask = Sign(r); dw = MatMul(tx, mask)
//   optimizer: m_new = Add(m, dw) with m a graph input only it reads.
Graph load_generic() {
  ModelBuilder b;
  b.input("x", {"batch", std::int64_t{4}}).input("w", {std::int64_t{4}, std::int64_t{8}});
  b.input("labels", {std::int64_t{2}}, 7).input("m", {std::int64_t{4}, std::int64_t{8}});
  b.node("MatMul", {"x", "w"}, {"y"}, "n1");
  b.node("Relu", {"y"}, {"r"}, "n2");
  auto& sum = b.node("ReduceSum", {"r"}, {"s"}, "n3");
  test::set_int_attr(sum, "keepdims", 0);
  b.node("Cast", {"labels"}, {"lf"}, "n3b");
  test::set_int_attr(b.node("ReduceSum", {"lf"}, {"ls"}, "n3c"), "keepdims", 0);
  b.node("Add", {"s", "ls"}, {"objective"}, "n4");
  test::set_int_attr(*b.proto().mutable_graph()->mutable_node(3), "to", 1);
  b.node("Transpose", {"x"}, {"tx"}, "n5");
  b.node("Sign", {"r"}, {"mask"}, "n6");
  b.node("MatMul", {"tx", "mask"}, {"dw"}, "n7");
  b.node("Add", {"m", "dw"}, {"m_new"}, "n8");
  b.output("objective").output("m_new");
  LoadOptions o;
  o.dims["batch"] = 2;
  return load_model(b.write("generic"), o).graph;
}

TensorClass cls(const Graph& g, const char* name) { return g.tensor(*g.find_tensor(name)).cls; }

TEST(Classify, FindsTheScalarLossWithoutItsName) {
  Graph g = load_generic();
  ASSERT_NE(g.loss, kNoTensor);
  EXPECT_EQ(g.tensor(g.loss).name, "objective");
}

TEST(Classify, ForwardIsWhatTheLossDependsOn) {
  Graph g = load_generic();
  for (const char* f : {"n1", "n2", "n3", "n3b", "n3c", "n4"})
    EXPECT_TRUE(g.node(*g.find_node(f)).is_forward) << f;
  for (const char* b : {"n5", "n6", "n7", "n8"})
    EXPECT_FALSE(g.node(*g.find_node(b)).is_forward) << b;
}

TEST(Classify, ClassesFromStructure) {
  Graph g = load_generic();
  EXPECT_EQ(cls(g, "x"), TensorClass::kInput);           // symbolic batch dim
  EXPECT_EQ(cls(g, "labels"), TensorClass::kInput);      // int64
  EXPECT_EQ(cls(g, "w"), TensorClass::kParameter);       // static float input read by forward
  EXPECT_EQ(cls(g, "m"), TensorClass::kOptimizerState);  // only the backward reads it
  EXPECT_EQ(cls(g, "y"), TensorClass::kTemporary);       // forward, read only by forward
  EXPECT_EQ(cls(g, "r"), TensorClass::kActivation);      // forward, read by backward
  EXPECT_EQ(cls(g, "tx"), TensorClass::kGradient);
  EXPECT_EQ(cls(g, "dw"), TensorClass::kGradient);
  EXPECT_EQ(cls(g, "objective"), TensorClass::kOutput);
  EXPECT_EQ(cls(g, "m_new"), TensorClass::kOutput);
}

TEST(Classify, NamedLossOverridesTheGuess) {
  ModelBuilder b;
  b.input("x", {std::int64_t{3}});
  test::set_int_attr(b.node("ReduceSum", {"x"}, {"a"}, "ra"), "keepdims", 0);
  test::set_int_attr(b.node("ReduceMax", {"x"}, {"b"}, "rb"), "keepdims", 0);
  b.output("a").output("b");
  LoadOptions o;
  o.loss = "b";
  Graph g = load_model(b.write("named"), o).graph;
  EXPECT_EQ(g.tensor(g.loss).name, "b");
  EXPECT_FALSE(g.node(*g.find_node("ra")).is_forward);
  o.loss = "nope";
  EXPECT_THROW(load_model(b.write("named"), o), InputError);
}

TEST(Classify, NoScalarOutputMeansAllForward) {
  ModelBuilder b;
  b.input("x", {std::int64_t{3}});
  b.node("Relu", {"x"}, {"y"}, "only");
  b.output("y");
  LoadedModel m = load_model(b.write("inference"), {});
  EXPECT_EQ(m.graph.loss, kNoTensor);
  EXPECT_TRUE(m.graph.node(0).is_forward);
  EXPECT_FALSE(m.warnings.empty());
}

}  // namespace
}  // namespace memplan::ir
