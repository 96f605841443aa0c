#include "ir/small_tensor_ops.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>
#include <string>
#include <unordered_map>

#include "ir/broadcast_gradient_axes.h"
#include "ir/small_tensor_op_kit.h"

namespace memplan::ir {
namespace {

using namespace small_ops;
using onnx::TensorProto;

Outputs elementwise(
    const std::vector<const SmallTensor*>& args, int32_t out_elem,
    const std::function<void(SmallTensor&, std::size_t, const std::vector<std::size_t>&)>& f) {
  for (const SmallTensor* a : args)
    if (a == nullptr) return std::nullopt;
  auto dims = broadcast_dims(args);
  if (!dims || !fits(*dims)) return std::nullopt;
  std::vector<std::vector<std::size_t>> offsets;
  for (const SmallTensor* a : args) offsets.push_back(broadcast_offsets(a->dims, *dims));
  SmallTensor out = SmallTensor::zeros(out_elem, *dims);
  std::vector<std::size_t> at(args.size());
  for (std::size_t k = 0; k < out.size(); ++k) {
    for (std::size_t i = 0; i < args.size(); ++i) at[i] = offsets[i][k];
    f(out, k, at);
  }
  return one(std::move(out));
}

struct Arith {
  std::function<int64_t(int64_t, int64_t)> on_ints;
  std::function<double(double, double)> on_reals;
};

// Integer arithmetic wraps, as ONNX Runtime's kernels do, instead of
// overflowing into undefined behaviour.
int64_t wrapping(uint64_t v) { return static_cast<int64_t>(v); }
int64_t add_ints(int64_t a, int64_t b) {
  return wrapping(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
int64_t sub_ints(int64_t a, int64_t b) {
  return wrapping(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
}
int64_t mul_ints(int64_t a, int64_t b) {
  return wrapping(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}
bool div_overflows(int64_t a, int64_t b) {
  return b == 0 || (a == std::numeric_limits<int64_t>::min() && b == -1);
}
int64_t int_div(int64_t a, int64_t b) { return div_overflows(a, b) ? 0 : a / b; }
int64_t int_mod(int64_t a, int64_t b) {
  if (div_overflows(a, b)) return 0;
  int64_t r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;  // the divisor's sign, as numpy
}

Eval arithmetic(Arith op) {
  return [op](const NodeProto&, const SmallOpInputs& in) -> Outputs {
    const SmallTensor *a = value(in, 0), *b = value(in, 1);
    if (a == nullptr || b == nullptr) return std::nullopt;
    const bool real = a->floating();
    return elementwise({a, b}, a->elem, [&](SmallTensor& out, std::size_t k, const auto& at) {
      if (real) {
        out.set(k, op.on_reals(a->real(at[0]), b->real(at[1])));
      } else {
        out.ints[k] = op.on_ints(a->ints[at[0]], b->integer(at[1]));
      }
    });
  };
}

// `holds` gets the order of a against b: -1, 0 or 1. Integers are compared
// as integers: shape values may exceed 2^53.
Eval comparison(std::function<bool(int)> holds) {
  return [holds](const NodeProto&, const SmallOpInputs& in) -> Outputs {
    const SmallTensor *a = value(in, 0), *b = value(in, 1);
    if (a == nullptr || b == nullptr) return std::nullopt;
    const bool real = a->floating() || b->floating();
    return elementwise({a, b}, TensorProto::BOOL,
                       [&](SmallTensor& out, std::size_t k, const auto& at) {
                         int order = 0;
                         if (real) {
                           const double x = a->real(at[0]), y = b->real(at[1]);
                           order = (x > y) - (x < y);
                         } else {
                           const int64_t x = a->ints[at[0]], y = b->ints[at[1]];
                           order = (x > y) - (x < y);
                         }
                         out.ints[k] = holds(order) ? 1 : 0;
                       });
  };
}

Eval unary(std::function<double(double)> f) {
  return [f](const NodeProto&, const SmallOpInputs& in) -> Outputs {
    const SmallTensor* a = value(in, 0);
    if (a == nullptr) return std::nullopt;
    SmallTensor out = *a;
    for (std::size_t k = 0; k < out.size(); ++k) {
      if (a->floating()) {
        out.set(k, f(a->reals[k]));
      } else {
        out.ints[k] = saturating_int64(f(static_cast<double>(a->ints[k])));
      }
    }
    return one(std::move(out));
  };
}

Outputs variadic_extreme(const SmallOpInputs& in, bool take_max) {
  const SmallTensor* acc = value(in, 0);
  if (acc == nullptr) return std::nullopt;
  SmallTensor result = *acc;
  for (std::size_t i = 1; i < in.values.size(); ++i) {
    const SmallTensor* b = value(in, i);
    if (b == nullptr) return std::nullopt;
    auto next = elementwise({&result, b}, result.elem,
                            [&](SmallTensor& out, std::size_t k, const auto& at) {
                              const double x = result.real(at[0]), y = b->real(at[1]);
                              if (result.floating()) {
                                out.set(k, take_max ? std::max(x, y) : std::min(x, y));
                              } else {
                                const int64_t p = result.ints[at[0]], q = b->integer(at[1]);
                                out.ints[k] = take_max ? std::max(p, q) : std::min(p, q);
                              }
                            });
    if (!next) return std::nullopt;
    result = std::move((*next)[0]);
  }
  return one(std::move(result));
}

Outputs where(const NodeProto&, const SmallOpInputs& in) {
  const SmallTensor *c = value(in, 0), *x = value(in, 1), *y = value(in, 2);
  if (c == nullptr || x == nullptr || y == nullptr) return std::nullopt;
  return elementwise({c, x, y}, x->elem, [&](SmallTensor& out, std::size_t k, const auto& at) {
    const SmallTensor* from = c->integer(at[0]) != 0 ? x : y;
    const std::size_t j = from == x ? at[1] : at[2];
    if (out.floating()) {
      out.reals[k] = from->real(j);
    } else {
      out.ints[k] = from->integer(j);
    }
  });
}

Outputs cast(const NodeProto& n, const SmallOpInputs& in) {
  const SmallTensor* a = value(in, 0);
  const auto to = static_cast<int32_t>(int_attr(n, "to", 0));
  if (a == nullptr || !foldable_elem_type(to)) return std::nullopt;
  SmallTensor out = SmallTensor::zeros(to, a->dims);
  for (std::size_t k = 0; k < out.size(); ++k) {
    if (!a->floating() && !out.floating() && to != TensorProto::BOOL) {
      out.ints[k] = a->ints[k];
    } else {
      out.set(k, a->real(k));
    }
  }
  return one(std::move(out));
}

Outputs shape_of(const NodeProto& n, const SmallOpInputs& in) {
  if (in.dims.empty() || !in.dims[0]) return std::nullopt;
  const auto& d = *in.dims[0];
  const auto rank = static_cast<int64_t>(d.size());
  int64_t start = std::clamp(normalized_axis(int_attr(n, "start", 0), rank), int64_t{0}, rank);
  int64_t end = std::clamp(normalized_axis(int_attr(n, "end", rank), rank), int64_t{0}, rank);
  SmallTensor out;
  out.elem = TensorProto::INT64;
  if (end > start) out.ints.assign(d.begin() + start, d.begin() + end);
  out.dims = {static_cast<int64_t>(out.ints.size())};
  return one(std::move(out));
}

Outputs size_of(const NodeProto&, const SmallOpInputs& in) {
  if (in.dims.empty() || !in.dims[0]) return std::nullopt;
  SmallTensor out;
  out.ints = {element_count(*in.dims[0])};
  return one(std::move(out));
}

Outputs identity(const NodeProto&, const SmallOpInputs& in) {
  if (value(in, 0) == nullptr) return std::nullopt;
  return one(*value(in, 0));
}

Outputs constant_of_shape(const NodeProto& n, const SmallOpInputs& in) {
  const SmallTensor* shape = value(in, 0);
  if (shape == nullptr || shape->floating() || !fits(shape->ints)) return std::nullopt;
  SmallTensor fill = SmallTensor::zeros(TensorProto::FLOAT, {1});
  if (const auto* a = attr(n, "value"); a != nullptr && a->has_t()) {
    auto v = small_tensor_from_proto(a->t());
    if (!v || v->size() != 1) return std::nullopt;
    fill = *v;
  }
  SmallTensor out = SmallTensor::zeros(fill.elem, shape->ints);
  for (std::size_t k = 0; k < out.size(); ++k) out.set(k, fill.real(0));
  if (!out.floating()) std::fill(out.ints.begin(), out.ints.end(), fill.integer(0));
  return one(std::move(out));
}

Outputs range(const NodeProto&, const SmallOpInputs& in) {
  const SmallTensor *s = value(in, 0), *l = value(in, 1), *d = value(in, 2);
  if (s == nullptr || l == nullptr || d == nullptr || s->size() != 1 || l->size() != 1 ||
      d->size() != 1)
    return std::nullopt;
  const double start = s->real(0), delta = d->real(0);
  if (delta == 0.0) return std::nullopt;
  const double steps = std::ceil((l->real(0) - start) / delta);
  if (!(steps <= static_cast<double>(kMaxSmallTensorElements))) return std::nullopt;  // NaN too
  const auto count = static_cast<int64_t>(std::max(0.0, steps));
  SmallTensor out = SmallTensor::zeros(s->elem, {count});
  for (int64_t k = 0; k < count; ++k) {
    const auto at = static_cast<std::size_t>(k);
    if (out.floating()) {
      out.set(at, start + static_cast<double>(k) * delta);
    } else {
      out.ints[at] = s->ints[0] + k * d->integer(0);
    }
  }
  return one(std::move(out));
}

enum class Reduce { kSum, kProd, kMax, kMin };

Eval reduction(Reduce kind) {
  return [kind](const NodeProto& n, const SmallOpInputs& in) -> Outputs {
    const SmallTensor* a = value(in, 0);
    auto axes = ints_from(n, in, 1, "axes");
    if (a == nullptr || !axes) return std::nullopt;
    const bool keep = int_attr(n, "keepdims", 1) != 0;
    if (axes->empty() && int_attr(n, "noop_with_empty_axes", 0) != 0) return one(*a);
    std::vector<bool> reduced(a->dims.size(), axes->empty());
    for (int64_t x : *axes) {
      const int64_t ax = normalized_axis(x, a->rank());
      if (ax < 0 || ax >= a->rank()) return std::nullopt;
      reduced[static_cast<std::size_t>(ax)] = true;
    }
    std::vector<int64_t> kept_dims, out_dims;
    for (std::size_t d = 0; d < a->dims.size(); ++d) {
      kept_dims.push_back(reduced[d] ? 1 : a->dims[d]);
      if (!reduced[d] || keep) out_dims.push_back(kept_dims.back());
    }
    SmallTensor out = SmallTensor::zeros(a->elem, kept_dims);
    std::vector<bool> seen(out.size(), false);
    const auto in_strides = strides_of(a->dims), out_strides = strides_of(kept_dims);
    for (std::size_t k = 0; k < a->size(); ++k) {
      std::vector<int64_t> idx = unflatten(k, in_strides);
      for (std::size_t d = 0; d < idx.size(); ++d)
        if (reduced[d]) idx[d] = 0;
      const auto o = static_cast<std::size_t>(flatten(idx, out_strides));
      const double x = a->real(k), acc = out.real(o);
      double r = x;
      if (seen[o]) {
        r = kind == Reduce::kSum    ? acc + x
            : kind == Reduce::kProd ? acc * x
            : kind == Reduce::kMax  ? std::max(acc, x)
                                    : std::min(acc, x);
      }
      seen[o] = true;
      out.set(o, r);
    }
    if (a->size() == 0) {  // an empty product is 1, a sum 0, a max or min undefined
      if (kind == Reduce::kMax || kind == Reduce::kMin) return std::nullopt;
      for (std::size_t k = 0; kind == Reduce::kProd && k < out.size(); ++k) out.set(k, 1.0);
    }
    out.dims = out_dims;
    return one(std::move(out));
  };
}

Outputs constant(const NodeProto& n, const SmallOpInputs&) {
  for (const auto& a : n.attribute()) {
    SmallTensor v;
    if (a.name() == "value" && a.has_t()) {
      auto t = small_tensor_from_proto(a.t());
      if (!t) return std::nullopt;
      return one(std::move(*t));
    }
    if (a.name() == "value_int") {
      v.ints = {a.i()};
    } else if (a.name() == "value_ints") {
      v.ints.assign(a.ints().begin(), a.ints().end());
      v.dims = {static_cast<int64_t>(v.ints.size())};
    } else if (a.name() == "value_float" || a.name() == "value_floats") {
      v.elem = TensorProto::FLOAT;
      if (a.name() == "value_float") {
        v.reals = {a.f()};
      } else {
        v.reals.assign(a.floats().begin(), a.floats().end());
        v.dims = {static_cast<int64_t>(v.reals.size())};
      }
    } else {
      continue;
    }
    return one(std::move(v));
  }
  return std::nullopt;
}

Eval logical(std::function<bool(bool, bool)> f) {
  return [f](const NodeProto&, const SmallOpInputs& in) -> Outputs {
    const SmallTensor *a = value(in, 0), *b = value(in, 1);
    if (a == nullptr || b == nullptr) return std::nullopt;
    return elementwise({a, b}, TensorProto::BOOL,
                       [&](SmallTensor& out, std::size_t k, const auto& at) {
                         out.ints[k] = f(a->integer(at[0]) != 0, b->integer(at[1]) != 0) ? 1 : 0;
                       });
  };
}

Outputs broadcast_gradient_args(const NodeProto& n, const SmallOpInputs& in) {
  const SmallTensor *a = value(in, 0), *b = value(in, 1);
  if (a == nullptr || b == nullptr || a->floating() || b->floating()) return std::nullopt;
  auto axes = broadcast_gradient_axes(a->ints, b->ints);
  if (!axes) return std::nullopt;
  std::vector<SmallTensor> outs;
  for (auto* v : {&axes->first, &axes->second}) {
    if (static_cast<int>(outs.size()) == n.output_size()) break;
    outs.push_back(ints_vector(*v));
  }
  return outs;
}

const EvalTable& evaluators() {
  static const EvalTable table = [] {
    EvalTable t = {
        {"Constant", constant},
        {"Shape", shape_of},
        {"Size", size_of},
        {"Identity", identity},
        {"Cast", cast},
        {"BroadcastGradientArgs", broadcast_gradient_args},
        {"ConstantOfShape", constant_of_shape},
        {"Range", range},
        {"Where", where},
        {"Add", arithmetic({add_ints, std::plus<double>()})},
        {"Sub", arithmetic({sub_ints, std::minus<double>()})},
        {"Mul", arithmetic({mul_ints, std::multiplies<double>()})},
        {"Div", arithmetic({int_div, std::divides<double>()})},
        {"Mod", arithmetic({int_mod, [](double a, double b) { return std::fmod(a, b); }})},
        {"Pow", arithmetic({[](int64_t a, int64_t b) {
                              return saturating_int64(
                                  std::pow(static_cast<double>(a), static_cast<double>(b)));
                            },
                            [](double a, double b) { return std::pow(a, b); }})},
        {"Equal", comparison([](int o) { return o == 0; })},
        {"Less", comparison([](int o) { return o < 0; })},
        {"LessOrEqual", comparison([](int o) { return o <= 0; })},
        {"Greater", comparison([](int o) { return o > 0; })},
        {"GreaterOrEqual", comparison([](int o) { return o >= 0; })},
        {"And", logical([](bool a, bool b) { return a && b; })},
        {"Or", logical([](bool a, bool b) { return a || b; })},
        {"Xor", logical([](bool a, bool b) { return a != b; })},
        {"Not", unary([](double a) { return a == 0.0 ? 1.0 : 0.0; })},
        {"Neg", unary([](double a) { return -a; })},
        {"Abs", unary([](double a) { return std::fabs(a); })},
        {"Floor", unary([](double a) { return std::floor(a); })},
        {"Ceil", unary([](double a) { return std::ceil(a); })},
        {"Sqrt", unary([](double a) { return std::sqrt(a); })},
        {"Reciprocal", unary([](double a) { return 1.0 / a; })},
        {"Sign", unary([](double a) { return static_cast<double>((a > 0) - (a < 0)); })},
        {"Max",
         [](const NodeProto&, const SmallOpInputs& in) { return variadic_extreme(in, true); }},
        {"Min",
         [](const NodeProto&, const SmallOpInputs& in) { return variadic_extreme(in, false); }},
        {"ReduceSum", reduction(Reduce::kSum)},
        {"ReduceProd", reduction(Reduce::kProd)},
        {"ReduceMax", reduction(Reduce::kMax)},
        {"ReduceMin", reduction(Reduce::kMin)},
    };
    add_layout_evaluators(t);
    return t;
  }();
  return table;
}

bool default_domain(const NodeProto& n) { return n.domain().empty() || n.domain() == "ai.onnx"; }

}  // namespace

bool small_op_known(const NodeProto& node) {
  // ONNX Runtime's own shape computations, in its domain.
  if (node.op_type() == "ConcatTraining" || node.op_type() == "BroadcastGradientArgs")
    return node.domain() == "com.microsoft";
  return default_domain(node) && evaluators().count(node.op_type()) != 0;
}

std::optional<std::vector<SmallTensor>> evaluate_small_op(const NodeProto& node,
                                                          const SmallOpInputs& in) {
  if (!small_op_known(node)) return std::nullopt;
  auto out = evaluators().at(node.op_type())(node, in);
  if (!out) return std::nullopt;
  for (const SmallTensor& v : *out)
    if (v.size() > kMaxSmallTensorElements || !foldable_elem_type(v.elem)) return std::nullopt;
  return out;
}

}  // namespace memplan::ir
