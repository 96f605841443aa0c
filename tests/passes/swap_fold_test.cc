// A swapped value ORT never makes (a Transpose, a scale) is swapped as its
// input and made again after the reload (passes/swap_fold.h).
#include "passes/swap_fold.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "passes/rewrite_model.h"
#include "passes/rewrite_test_support.h"
#include "passes/swap_functions.h"

namespace memplan::passes {
namespace {

using namespace test_support;

// e = Exp(x); q = Mul(e, s), s a constant scalar; r = Relu(q);
// m = Mul(r, q) reads q late; loss = ReduceSum(m). float32 [2,4].
Loaded scaled_model() {
  test::ModelBuilder b;
  b.input("x", {std::int64_t{2}, std::int64_t{4}});
  b.initializer("s", {});
  b.node("Exp", {"x"}, {"e"}, "exp");
  b.node("Mul", {"e", "s"}, {"q"}, "scale");
  b.node("Relu", {"q"}, {"r"}, "relu");
  b.node("Mul", {"r", "q"}, {"m"}, "late");
  test::set_int_attr(b.node("ReduceSum", {"m"}, {"loss"}, "sum"), "keepdims", 0);
  b.output("loss", {}, 1, /*with_shape=*/true);
  return load(b.proto());
}

// q swapped out while e is still resident, or after the plan freed e.
planner::Plan swap_q(const ir::Graph& g, bool e_freed_first) {
  std::pair<const char*, const char*> first{"free", "e"}, second{"swap_out", "q"};
  if (!e_freed_first) std::swap(first, second);
  return plan_for(g, steps(g, {{"compute", "exp"},
                               {"compute", "scale"},
                               first,
                               second,
                               {"compute", "relu"},
                               {"free", "q"},
                               {"swap_in", "q"},
                               {"compute", "late"},
                               {"free", "q"},
                               {"free", "r"},
                               {"compute", "sum"},
                               {"free", "m"}}));
}

const onnx::NodeProto* only_node(const onnx::ModelProto& m, std::string_view domain,
                                 const std::string& op) {
  const onnx::NodeProto* found = nullptr;
  for (const auto& n : m.graph().node())
    if (n.domain() == domain && n.op_type() == op) {
      if (found != nullptr) return nullptr;
      found = &n;
    }
  return found;
}

TEST(SwapFold, AScaleAndATransposeFoldTheirConstantsAndKeepTheirSize) {
  Loaded m = scaled_model();
  std::vector<bool> constant(m.graph.tensors().size(), false);
  constant[*m.graph.find_tensor("s")] = true;
  const auto fold = swap_fold(m.graph, *m.graph.find_tensor("q"), constant);
  ASSERT_TRUE(fold);
  EXPECT_EQ(fold->op, *m.graph.find_node("scale"));
  EXPECT_EQ(fold->input, *m.graph.find_tensor("e"));
  EXPECT_FALSE(swap_fold(m.graph, *m.graph.find_tensor("r"), constant)) << "a Relu is no fold";
  // Without a constant scale it is a product of two values.
  constant[*m.graph.find_tensor("s")] = false;
  EXPECT_FALSE(swap_fold(m.graph, *m.graph.find_tensor("q"), constant));
}

TEST(SwapFold, TheRewriteSwapsTheInputAndRedoesTheScaleAfterTheReload) {
  Loaded m = scaled_model();
  const onnx::ModelProto out = rewrite_model(m.proto, m.graph, swap_q(m.graph, false), {});
  const onnx::NodeProto* swap_out = only_node(out, kMemplanDomain, std::string(kSwapOutOp));
  const onnx::NodeProto* swap_in = only_node(out, kMemplanDomain, std::string(kSwapInOp));
  ASSERT_TRUE(swap_out != nullptr && swap_in != nullptr);
  EXPECT_EQ(swap_out->input(0), "e");
  const onnx::NodeProto* refold = nullptr;
  for (const auto& n : out.graph().node())
    if (n.doc_string().rfind(kRefoldDoc, 0) == 0) refold = &n;
  ASSERT_NE(refold, nullptr);
  EXPECT_EQ(refold->op_type(), "Mul");
  EXPECT_EQ(refold->input(0), swap_in->output(0));
  EXPECT_EQ(refold->input(1), "s");
  EXPECT_EQ(node_named(out, "late").input(1), refold->output(0));
  // What the redone scale reads, before and after the SwapIn, is typed with
  // its rank for ORT, which folds the scale only then.
  int typed = 0;
  for (const auto& v : out.graph().value_info())
    if (v.name() == swap_in->input(0) || v.name() == swap_in->output(0)) {
      EXPECT_EQ(v.type().tensor_type().shape().dim_size(), 2) << v.name();
      ++typed;
    }
  EXPECT_EQ(typed, 2);
}

TEST(SwapFold, AnInputThePlanHasFreedIsNotSwappedInsteadOfTheValue) {
  Loaded m = scaled_model();
  const onnx::ModelProto out = rewrite_model(m.proto, m.graph, swap_q(m.graph, true), {});
  const onnx::NodeProto* swap_out = only_node(out, kMemplanDomain, std::string(kSwapOutOp));
  ASSERT_NE(swap_out, nullptr);
  EXPECT_EQ(swap_out->input(0), "q");
  for (const auto& n : out.graph().node())
    EXPECT_NE(n.doc_string().rfind(kRefoldDoc, 0), 0u) << n.name();
}

}  // namespace
}  // namespace memplan::passes
