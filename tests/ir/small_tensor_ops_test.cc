// Evaluation of the small constant computations shape folding relies on.
#include "ir/small_tensor_ops.h"

#include <gtest/gtest.h>

#include "support/model_builder.h"

namespace memplan::ir {
namespace {

using Ints = std::vector<int64_t>;

SmallTensor ints(Ints values, Ints dims) {
  SmallTensor t;
  t.ints = std::move(values);
  t.dims = std::move(dims);
  return t;
}

SmallTensor vec(Ints values) {
  const auto n = static_cast<int64_t>(values.size());
  return ints(std::move(values), {n});
}

onnx::NodeProto node(const std::string& op, int inputs, int outputs = 1) {
  onnx::NodeProto n;
  n.set_op_type(op);
  for (int i = 0; i < inputs; ++i) n.add_input("in" + std::to_string(i));
  for (int i = 0; i < outputs; ++i) n.add_output("out" + std::to_string(i));
  return n;
}

// Evaluates `n` on constants; the single output, or a failed test.
SmallTensor eval(const onnx::NodeProto& n, std::vector<const SmallTensor*> values,
                 std::vector<std::optional<Ints>> dims = {}) {
  SmallOpInputs in{std::move(values), std::move(dims)};
  in.dims.resize(in.values.size());
  auto out = evaluate_small_op(n, in);
  EXPECT_TRUE(out.has_value()) << n.op_type();
  return out ? out->front() : SmallTensor{};
}

TEST(SmallTensorOps, ShapeHonoursStartAndEnd) {
  auto n = node("Shape", 1);
  test::set_int_attr(n, "start", 1);
  test::set_int_attr(n, "end", -1);
  SmallTensor out = eval(n, {nullptr}, {Ints{4, 16, 8, 2}});
  EXPECT_EQ(out.ints, (Ints{16, 8}));
  EXPECT_EQ(out.dims, (Ints{2}));
}

TEST(SmallTensorOps, GatherScalarIndexDropsTheAxis) {
  SmallTensor shape = vec({4, 16, 32}), idx = ints({-2}, {});
  SmallTensor out = eval(node("Gather", 2), {&shape, &idx});
  EXPECT_EQ(out.ints, (Ints{16}));
  EXPECT_TRUE(out.dims.empty());
}

TEST(SmallTensorOps, GatherAlongAxisOneOfAMatrix) {
  SmallTensor m = ints({1, 2, 3, 4, 5, 6}, {2, 3}), idx = vec({2, 0});
  auto n = node("Gather", 2);
  test::set_int_attr(n, "axis", 1);
  SmallTensor out = eval(n, {&m, &idx});
  EXPECT_EQ(out.dims, (Ints{2, 2}));
  EXPECT_EQ(out.ints, (Ints{3, 1, 6, 4}));
}

TEST(SmallTensorOps, ConcatTrainingAlsoGivesTheLengths) {
  SmallTensor a = vec({4}), b = vec({16, 2}), c = vec({-1});
  auto n = node("ConcatTraining", 3, 2);
  n.set_domain("com.microsoft");
  test::set_int_attr(n, "axis", 0);
  SmallOpInputs in{{&a, &b, &c}, {{}, {}, {}}};
  auto out = evaluate_small_op(n, in);
  ASSERT_TRUE(out.has_value());
  EXPECT_EQ((*out)[0].ints, (Ints{4, 16, 2, -1}));
  EXPECT_EQ((*out)[1].ints, (Ints{1, 2, 1}));
}

TEST(SmallTensorOps, IntegerDivisionAndBroadcast) {
  SmallTensor a = vec({32, 64}), b = ints({4}, {});
  SmallTensor out = eval(node("Div", 2), {&a, &b});
  EXPECT_EQ(out.ints, (Ints{8, 16}));
  EXPECT_EQ(out.dims, (Ints{2}));
}

TEST(SmallTensorOps, EqualWhereReplacesMinusOne) {
  // torch's view(-1, ...) under dynamic shapes: Where(Equal(s, -1), 1, s).
  SmallTensor s = vec({-1, 8}), m1 = ints({-1}, {}), one = ints({1}, {});
  SmallTensor eq = eval(node("Equal", 2), {&s, &m1});
  EXPECT_EQ(eq.elem, onnx::TensorProto::BOOL);
  EXPECT_EQ(eq.ints, (Ints{1, 0}));
  SmallTensor out = eval(node("Where", 3), {&eq, &one, &s});
  EXPECT_EQ(out.ints, (Ints{1, 8}));
}

TEST(SmallTensorOps, SliceWithNegativeStepAndUnsqueeze) {
  SmallTensor s = vec({2, 3, 5, 7}), st = vec({-1}), en = vec({0}), ax = vec({0}), sp = vec({-2});
  SmallTensor out = eval(node("Slice", 5), {&s, &st, &en, &ax, &sp});
  EXPECT_EQ(out.ints, (Ints{7, 3}));
  SmallTensor axes = vec({0});
  SmallTensor u = eval(node("Unsqueeze", 2), {&out, &axes});
  EXPECT_EQ(u.dims, (Ints{1, 2}));
}

TEST(SmallTensorOps, RangeReshapeAndReduceProd) {
  SmallTensor a = ints({0}, {}), b = ints({6}, {}), d = ints({1}, {});
  SmallTensor r = eval(node("Range", 3), {&a, &b, &d});
  EXPECT_EQ(r.ints, (Ints{0, 1, 2, 3, 4, 5}));
  SmallTensor shape = vec({2, -1});
  SmallTensor m = eval(node("Reshape", 2), {&r, &shape});
  EXPECT_EQ(m.dims, (Ints{2, 3}));
  auto p = node("ReduceProd", 1);
  test::set_ints_attr(p, "axes", {1});
  test::set_int_attr(p, "keepdims", 0);
  SmallTensor prod = eval(p, {&m});
  EXPECT_EQ(prod.ints, (Ints{0, 60}));
}

TEST(SmallTensorOps, CastToFloatAndBack) {
  SmallTensor s = vec({7, 9});
  auto to_float = node("Cast", 1);
  test::set_int_attr(to_float, "to", onnx::TensorProto::FLOAT);
  SmallTensor f = eval(to_float, {&s});
  ASSERT_TRUE(f.floating());
  EXPECT_DOUBLE_EQ(f.reals[1], 9.0);
  SmallTensor two = SmallTensor::zeros(onnx::TensorProto::FLOAT, {});
  two.reals[0] = 2.0;
  SmallTensor half = eval(node("Mul", 2), {&f, &two});
  EXPECT_DOUBLE_EQ(half.reals[0], 14.0);
}

TEST(SmallTensorOps, RefusesWhatItCannotEvaluate) {
  SmallTensor s = vec({4});
  SmallOpInputs missing{{nullptr, &s}, {{}, {}}};
  EXPECT_FALSE(evaluate_small_op(node("Add", 2), missing).has_value());
  SmallOpInputs fine{{&s, &s}, {{}, {}}};
  auto unknown = node("MatMul", 2);
  EXPECT_FALSE(evaluate_small_op(unknown, fine).has_value());
  auto foreign = node("Add", 2);
  foreign.set_domain("com.example");
  EXPECT_FALSE(evaluate_small_op(foreign, fine).has_value());
  // A ConstantOfShape larger than a shape computation is left alone.
  SmallTensor big = vec({1024, 1024});
  SmallOpInputs large{{&big}, {{}}};
  EXPECT_FALSE(evaluate_small_op(node("ConstantOfShape", 1), large).has_value());
}

}  // namespace
}  // namespace memplan::ir
