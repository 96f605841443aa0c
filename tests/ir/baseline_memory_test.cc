#include "ir/baseline_memory.h"

#include <gtest/gtest.h>

#include "ir/liveness.h"
#include "ir/onnx_loader.h"
#include "support/model_builder.h"

namespace memplan::ir {
namespace {

using test::ModelBuilder;

Graph tiny(std::int64_t batch) {
  ModelBuilder b;
  b.input("x", {"batch", std::int64_t{4}}).input("w", {std::int64_t{4}, std::int64_t{8}});
  b.node("MatMul", {"x", "w"}, {"y"}, "s0");
  b.node("Relu", {"y"}, {"r"}, "s1");
  test::set_int_attr(b.node("ReduceSum", {"r"}, {"objective"}, "s2"), "keepdims", 0);
  b.node("Transpose", {"x"}, {"tx"}, "s3");
  b.node("Sign", {"r"}, {"mask"}, "s4");
  b.node("MatMul", {"tx", "mask"}, {"dw"}, "s5");
  b.node("Neg", {"x"}, {"unused"}, "s6");
  b.output("objective").output("dw");
  LoadOptions o;
  o.dims["batch"] = batch;
  return load_model(b.write("tiny"), o).graph;
}

TEST(Liveness, DefAndLastUse) {
  Graph g = tiny(2);
  Liveness l(g);
  auto id = [&](const char* n) { return *g.find_tensor(n); };
  EXPECT_EQ(l.def_step(id("x")), -1);
  EXPECT_TRUE(l.pinned(id("x")));
  EXPECT_EQ(l.def_step(id("r")), 1);
  EXPECT_EQ(l.last_use_step(id("r")), 4);
  EXPECT_EQ(l.free_step(id("r")), 4);
  EXPECT_TRUE(l.pinned(id("objective")));   // graph output
  EXPECT_EQ(l.free_step(id("unused")), 6);  // nothing reads it: freed when made
}

TEST(BaselineMemory, HandComputedTimeline) {
  // batch 2, float32. x 32 B, w 128 B: initial 160.
  //  s0 MatMul  +y 64          -> 224
  //  s1 Relu    +r 64 -> 288,  free y -> 224
  //  s2 Sum     +objective 4   -> 228 (output: kept)
  //  s3 Transp. +tx 32         -> 260
  //  s4 Sign    +mask 64 -> 324, free r -> 260
  //  s5 MatMul  +dw 128 -> 388, free tx, mask -> 292
  //  s6 Neg     +unused 32 -> 324, free unused -> 292
  Graph g = tiny(2);
  BaselineMemory m = baseline_memory(g, Liveness(g));
  EXPECT_EQ(m.initial_bytes, 160u);
  EXPECT_EQ(m.after_compute, (std::vector<std::uint64_t>{224, 288, 228, 260, 324, 388, 324}));
  EXPECT_EQ(m.after_frees, (std::vector<std::uint64_t>{224, 224, 228, 260, 260, 292, 292}));
  EXPECT_EQ(m.peak_bytes, 388u);
  EXPECT_EQ(m.peak_step, 5);
  // At the peak: x (input 32) + w (parameter 128) + objective, dw (outputs
  // 4 + 128) + tx, mask (gradients 32 + 64).
  EXPECT_EQ(m.peak_by_class[static_cast<int>(TensorClass::kInput)], 32u);
  EXPECT_EQ(m.peak_by_class[static_cast<int>(TensorClass::kParameter)], 128u);
  EXPECT_EQ(m.peak_by_class[static_cast<int>(TensorClass::kOutput)], 132u);
  EXPECT_EQ(m.peak_by_class[static_cast<int>(TensorClass::kGradient)], 96u);
  EXPECT_EQ(m.peak_by_class[static_cast<int>(TensorClass::kActivation)], 0u);
}

TEST(BaselineMemory, ScalesWithTheBoundDim) {
  // batch 8: x 128 + w 128 = 256. s4 Sign holds x, w, objective 4, tx 128,
  // r 256 and the new mask 256 = 900; s5 then has 900 - r 256 + dw 128 = 772,
  // so the peak moves from s5 to s4.
  Graph g = tiny(8);
  BaselineMemory m = baseline_memory(g, Liveness(g));
  EXPECT_EQ(m.peak_bytes, 900u);
  EXPECT_EQ(m.peak_step, 4);
  EXPECT_EQ(m.after_compute[5], 772u);
}

}  // namespace
}  // namespace memplan::ir
