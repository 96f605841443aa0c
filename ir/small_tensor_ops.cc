#include "ir/small_tensor_ops.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>
#include <string>
#include <unordered_map>

#include "ir/broadcast_gradient_axes.h"

namespace memplan::ir {
namespace {

using onnx::NodeProto;
using onnx::TensorProto;
using Outputs = std::optional<std::vector<SmallTensor>>;
using Eval = std::function<Outputs(const NodeProto&, const SmallOpInputs&)>;

const onnx::AttributeProto* attr(const NodeProto& n, const char* name) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

int64_t int_attr(const NodeProto& n, const char* name, int64_t fallback) {
  const auto* a = attr(n, name);
  return a != nullptr ? a->i() : fallback;
}

std::optional<std::vector<int64_t>> ints_attr(const NodeProto& n, const char* name) {
  const auto* a = attr(n, name);
  if (a == nullptr) return std::nullopt;
  return std::vector<int64_t>(a->ints().begin(), a->ints().end());
}

const SmallTensor* value(const SmallOpInputs& in, std::size_t i) {
  return i < in.values.size() ? in.values[i] : nullptr;
}

bool present(const NodeProto& n, int i) { return i < n.input_size() && !n.input(i).empty(); }

// Integer list from input i, or from attribute `name` where the op's older
// versions kept it there; nullopt when neither is known.
std::optional<std::vector<int64_t>> ints_from(const NodeProto& n, const SmallOpInputs& in, int i,
                                              const char* name) {
  if (auto a = ints_attr(n, name)) return a;
  if (!present(n, i)) return std::vector<int64_t>{};
  const SmallTensor* v = value(in, static_cast<std::size_t>(i));
  if (v == nullptr || v->floating()) return std::nullopt;
  return v->ints;
}

bool fits(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0 || d > static_cast<int64_t>(kMaxSmallTensorElements)) return false;
    n *= d;
    if (n > static_cast<int64_t>(kMaxSmallTensorElements)) return false;
  }
  return true;
}

int64_t normalized_axis(int64_t axis, int64_t rank) { return axis < 0 ? axis + rank : axis; }

Outputs one(SmallTensor v) { return std::vector<SmallTensor>{std::move(v)}; }

SmallTensor ints_vector(std::vector<int64_t> values) {
  SmallTensor t;
  t.dims = {static_cast<int64_t>(values.size())};
  t.ints = std::move(values);
  return t;
}

// Flat index into `in` for each element of a tensor of `out` dims that
// `in` broadcasts to (numpy rules).
std::vector<std::size_t> broadcast_offsets(const std::vector<int64_t>& in,
                                           const std::vector<int64_t>& out) {
  const std::size_t lead = out.size() - in.size();
  std::vector<int64_t> in_strides = strides_of(in);
  std::vector<std::size_t> offsets(static_cast<std::size_t>(element_count(out)));
  const std::vector<int64_t> out_strides = strides_of(out);
  for (std::size_t k = 0; k < offsets.size(); ++k) {
    int64_t rest = static_cast<int64_t>(k), at = 0;
    for (std::size_t d = 0; d < out.size(); ++d) {
      const int64_t idx = rest / out_strides[d];
      rest %= out_strides[d];
      if (d >= lead && in[d - lead] != 1) at += idx * in_strides[d - lead];
    }
    offsets[k] = static_cast<std::size_t>(at);
  }
  return offsets;
}

std::optional<std::vector<int64_t>> broadcast_dims(const std::vector<const SmallTensor*>& args) {
  std::vector<int64_t> out;
  for (const SmallTensor* a : args) {
    if (a->dims.size() > out.size()) out.insert(out.begin(), a->dims.size() - out.size(), 1);
    const std::size_t lead = out.size() - a->dims.size();
    for (std::size_t d = 0; d < a->dims.size(); ++d) {
      int64_t& o = out[lead + d];
      const int64_t x = a->dims[d];
      if (o == 1) {
        o = x;
      } else if (x != 1 && x != o) {
        return std::nullopt;
      }
    }
  }
  return out;
}

// Elementwise over broadcast inputs; `f` gets each element's inputs and
// writes the result into the output at k.
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

int64_t int_div(int64_t a, int64_t b) { return b == 0 ? 0 : a / b; }
int64_t int_mod(int64_t a, int64_t b) {
  if (b == 0) return 0;
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
        out.ints[k] = static_cast<int64_t>(f(static_cast<double>(a->ints[k])));
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

// Copies elements from `a` by a map from output index to input index.
SmallTensor gather_elements(const SmallTensor& a, std::vector<int64_t> dims,
                            const std::function<std::size_t(std::size_t)>& source) {
  SmallTensor out = SmallTensor::zeros(a.elem, std::move(dims));
  for (std::size_t k = 0; k < out.size(); ++k) {
    if (a.floating()) {
      out.reals[k] = a.reals[source(k)];
    } else {
      out.ints[k] = a.ints[source(k)];
    }
  }
  return out;
}

// The multi-index of flat k in a tensor with the given strides.
std::vector<int64_t> unflatten(std::size_t k, const std::vector<int64_t>& strides) {
  std::vector<int64_t> idx(strides.size());
  auto rest = static_cast<int64_t>(k);
  for (std::size_t d = 0; d < strides.size(); ++d) {
    idx[d] = rest / strides[d];
    rest %= strides[d];
  }
  return idx;
}

int64_t flatten(const std::vector<int64_t>& idx, const std::vector<int64_t>& strides) {
  return std::inner_product(idx.begin(), idx.end(), strides.begin(), int64_t{0});
}

Outputs gather(const NodeProto& n, const SmallOpInputs& in) {
  const SmallTensor *a = value(in, 0), *idx = value(in, 1);
  if (a == nullptr || idx == nullptr || idx->floating() || a->rank() == 0) return std::nullopt;
  const int64_t axis = normalized_axis(int_attr(n, "axis", 0), a->rank());
  if (axis < 0 || axis >= a->rank()) return std::nullopt;
  const int64_t extent = a->dims[static_cast<std::size_t>(axis)];
  std::vector<int64_t> dims(a->dims.begin(), a->dims.begin() + axis);
  dims.insert(dims.end(), idx->dims.begin(), idx->dims.end());
  dims.insert(dims.end(), a->dims.begin() + axis + 1, a->dims.end());
  if (!fits(dims)) return std::nullopt;
  for (int64_t i : idx->ints)
    if (i < -extent || i >= extent) return std::nullopt;
  const auto in_strides = strides_of(a->dims), out_strides = strides_of(dims);
  const auto q = static_cast<std::size_t>(idx->rank());
  return one(gather_elements(*a, dims, [&](std::size_t k) {
    const std::vector<int64_t> o = unflatten(k, out_strides);
    std::vector<int64_t> src(o.begin(), o.begin() + axis);
    int64_t flat_idx = 0;
    const auto idx_strides = strides_of(idx->dims);
    for (std::size_t d = 0; d < q; ++d)
      flat_idx += o[static_cast<std::size_t>(axis) + d] * idx_strides[d];
    int64_t i = idx->ints[static_cast<std::size_t>(flat_idx)];
    src.push_back(i < 0 ? i + extent : i);
    src.insert(src.end(), o.begin() + axis + static_cast<int64_t>(q), o.end());
    return static_cast<std::size_t>(flatten(src, in_strides));
  }));
}

// Concat; ConcatTraining also gives each input's length along the axis.
Outputs concat(const NodeProto& n, const SmallOpInputs& in) {
  std::vector<const SmallTensor*> parts;
  for (int i = 0; i < n.input_size(); ++i) {
    const SmallTensor* v = value(in, static_cast<std::size_t>(i));
    if (v == nullptr ||
        (!parts.empty() && (v->rank() != parts[0]->rank() || v->elem != parts[0]->elem)))
      return std::nullopt;
    parts.push_back(v);
  }
  if (parts.empty() || parts[0]->rank() == 0) return std::nullopt;
  const int64_t axis = normalized_axis(int_attr(n, "axis", 0), parts[0]->rank());
  if (axis < 0 || axis >= parts[0]->rank()) return std::nullopt;
  const auto ax = static_cast<std::size_t>(axis);
  std::vector<int64_t> dims = parts[0]->dims, lengths;
  dims[ax] = 0;
  for (const SmallTensor* p : parts) {
    for (std::size_t d = 0; d < dims.size(); ++d)
      if (d != ax && p->dims[d] != dims[d]) return std::nullopt;
    dims[ax] += p->dims[ax];
    lengths.push_back(p->dims[ax]);
  }
  if (!fits(dims)) return std::nullopt;
  SmallTensor out = SmallTensor::zeros(parts[0]->elem, dims);
  const auto out_strides = strides_of(dims);
  for (std::size_t k = 0; k < out.size(); ++k) {
    std::vector<int64_t> idx = unflatten(k, out_strides);
    std::size_t part = 0;
    while (idx[ax] >= parts[part]->dims[ax]) idx[ax] -= parts[part++]->dims[ax];
    const auto from = static_cast<std::size_t>(flatten(idx, strides_of(parts[part]->dims)));
    if (out.floating()) {
      out.reals[k] = parts[part]->reals[from];
    } else {
      out.ints[k] = parts[part]->ints[from];
    }
  }
  std::vector<SmallTensor> outs{std::move(out)};
  if (n.output_size() > 1) {
    SmallTensor len;
    len.ints = lengths;
    len.dims = {static_cast<int64_t>(lengths.size())};
    outs.push_back(std::move(len));
  }
  return outs;
}

Outputs with_dims(const SmallTensor& a, std::vector<int64_t> dims) {
  if (element_count(dims) != static_cast<int64_t>(a.size())) return std::nullopt;
  SmallTensor out = a;
  out.dims = std::move(dims);
  return one(std::move(out));
}

Outputs unsqueeze(const NodeProto& n, const SmallOpInputs& in) {
  const SmallTensor* a = value(in, 0);
  auto axes = ints_from(n, in, 1, "axes");
  if (a == nullptr || !axes) return std::nullopt;
  const int64_t rank = a->rank() + static_cast<int64_t>(axes->size());
  std::vector<bool> added(static_cast<std::size_t>(rank), false);
  for (int64_t x : *axes) {
    const int64_t ax = normalized_axis(x, rank);
    if (ax < 0 || ax >= rank) return std::nullopt;
    added[static_cast<std::size_t>(ax)] = true;
  }
  std::vector<int64_t> dims;
  std::size_t next = 0;
  for (bool add : added) dims.push_back(add ? 1 : (next < a->dims.size() ? a->dims[next++] : 1));
  return with_dims(*a, dims);
}

Outputs squeeze(const NodeProto& n, const SmallOpInputs& in) {
  const SmallTensor* a = value(in, 0);
  auto axes = ints_from(n, in, 1, "axes");
  if (a == nullptr || !axes) return std::nullopt;
  std::vector<bool> drop(a->dims.size(), axes->empty());
  for (int64_t x : *axes) {
    const int64_t ax = normalized_axis(x, a->rank());
    if (ax < 0 || ax >= a->rank()) return std::nullopt;
    drop[static_cast<std::size_t>(ax)] = true;
  }
  std::vector<int64_t> dims;
  for (std::size_t d = 0; d < a->dims.size(); ++d)
    if (!drop[d] || a->dims[d] != 1) dims.push_back(a->dims[d]);
  return with_dims(*a, dims);
}

Outputs reshape(const NodeProto& n, const SmallOpInputs& in) {
  const SmallTensor *a = value(in, 0), *shape = value(in, 1);
  if (a == nullptr || shape == nullptr || shape->floating()) return std::nullopt;
  std::vector<int64_t> dims = shape->ints;
  const bool allow_zero = int_attr(n, "allowzero", 0) != 0;
  int64_t known = 1;
  std::optional<std::size_t> infer;
  for (std::size_t d = 0; d < dims.size(); ++d) {
    if (dims[d] == 0 && !allow_zero) dims[d] = d < a->dims.size() ? a->dims[d] : 0;
    if (dims[d] == -1) {
      if (infer) return std::nullopt;
      infer = d;
    } else {
      known *= dims[d];
    }
  }
  if (infer) {
    if (known == 0) return std::nullopt;
    dims[*infer] = static_cast<int64_t>(a->size()) / known;
  }
  return with_dims(*a, dims);
}

Outputs flatten_op(const NodeProto& n, const SmallOpInputs& in) {
  const SmallTensor* a = value(in, 0);
  if (a == nullptr) return std::nullopt;
  const int64_t axis = normalized_axis(int_attr(n, "axis", 1), a->rank());
  if (axis < 0 || axis > a->rank()) return std::nullopt;
  int64_t outer = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= a->dims[static_cast<std::size_t>(d)];
  return with_dims(*a, {outer, outer == 0 ? 0 : static_cast<int64_t>(a->size()) / outer});
}

// Per axis: the first index and the step, and the output's extent.
struct SliceAxis {
  int64_t start = 0, step = 1, count = 0;
};

std::optional<SliceAxis> slice_axis(int64_t dim, int64_t start, int64_t end, int64_t step) {
  if (step == 0) return std::nullopt;
  auto clamp = [&](int64_t v, int64_t lo, int64_t hi) {
    return std::clamp(v < 0 ? v + dim : v, lo, hi);
  };
  const int64_t b = step > 0 ? clamp(start, 0, dim) : clamp(start, -1, dim - 1);
  const int64_t e = step > 0 ? clamp(end, 0, dim) : clamp(end, -1, dim - 1);
  const int64_t n = step > 0 ? (e - b + step - 1) / step : (b - e - step - 1) / (-step);
  return SliceAxis{b, step, std::max<int64_t>(n, 0)};
}

Outputs slice(const NodeProto& n, const SmallOpInputs& in) {
  const SmallTensor* a = value(in, 0);
  auto starts = ints_from(n, in, 1, "starts"), ends = ints_from(n, in, 2, "ends");
  auto axes = ints_from(n, in, 3, "axes"), steps = ints_from(n, in, 4, "steps");
  if (a == nullptr || !starts || !ends || !axes || !steps || starts->size() != ends->size())
    return std::nullopt;
  if (axes->empty())
    for (std::size_t i = 0; i < starts->size(); ++i) axes->push_back(static_cast<int64_t>(i));
  if (steps->empty()) steps->assign(starts->size(), 1);
  if (axes->size() != starts->size() || steps->size() != starts->size()) return std::nullopt;
  std::vector<SliceAxis> per(a->dims.size());
  for (std::size_t d = 0; d < per.size(); ++d) per[d].count = a->dims[d];
  for (std::size_t i = 0; i < axes->size(); ++i) {
    const int64_t ax = normalized_axis((*axes)[i], a->rank());
    if (ax < 0 || ax >= a->rank()) return std::nullopt;
    auto s =
        slice_axis(a->dims[static_cast<std::size_t>(ax)], (*starts)[i], (*ends)[i], (*steps)[i]);
    if (!s) return std::nullopt;
    per[static_cast<std::size_t>(ax)] = *s;
  }
  std::vector<int64_t> dims;
  for (const auto& p : per) dims.push_back(p.count);
  const auto out_strides = strides_of(dims), in_strides = strides_of(a->dims);
  return one(gather_elements(*a, dims, [&](std::size_t k) {
    std::vector<int64_t> idx = unflatten(k, out_strides);
    for (std::size_t d = 0; d < idx.size(); ++d) idx[d] = per[d].start + idx[d] * per[d].step;
    return static_cast<std::size_t>(flatten(idx, in_strides));
  }));
}

Outputs transpose(const NodeProto& n, const SmallOpInputs& in) {
  const SmallTensor* a = value(in, 0);
  if (a == nullptr) return std::nullopt;
  std::vector<int64_t> perm(a->dims.size());
  for (std::size_t d = 0; d < perm.size(); ++d) perm[d] = static_cast<int64_t>(perm.size() - 1 - d);
  if (auto p = ints_attr(n, "perm")) perm = *p;
  if (perm.size() != a->dims.size()) return std::nullopt;
  std::vector<int64_t> dims;
  for (int64_t p : perm) {
    if (p < 0 || p >= a->rank()) return std::nullopt;
    dims.push_back(a->dims[static_cast<std::size_t>(p)]);
  }
  const auto out_strides = strides_of(dims), in_strides = strides_of(a->dims);
  return one(gather_elements(*a, dims, [&](std::size_t k) {
    const std::vector<int64_t> o = unflatten(k, out_strides);
    std::vector<int64_t> src(o.size());
    for (std::size_t d = 0; d < o.size(); ++d) src[static_cast<std::size_t>(perm[d])] = o[d];
    return static_cast<std::size_t>(flatten(src, in_strides));
  }));
}

Outputs expand(const NodeProto&, const SmallOpInputs& in) {
  const SmallTensor *a = value(in, 0), *shape = value(in, 1);
  if (a == nullptr || shape == nullptr || shape->floating()) return std::nullopt;
  SmallTensor target;
  target.dims = shape->ints;
  for (int64_t d : target.dims)
    if (d < 0) return std::nullopt;
  auto dims = broadcast_dims({a, &target});
  if (!dims || !fits(*dims)) return std::nullopt;
  const auto offsets = broadcast_offsets(a->dims, *dims);
  return one(gather_elements(*a, *dims, [&](std::size_t k) { return offsets[k]; }));
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
  const auto count = static_cast<int64_t>(std::max(0.0, std::ceil((l->real(0) - start) / delta)));
  if (!fits({count})) return std::nullopt;
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
    if (kind == Reduce::kProd && a->size() == 0) out.set(0, 1.0);
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

const std::unordered_map<std::string, Eval>& evaluators() {
  static const std::unordered_map<std::string, Eval> table = {
      {"Constant", constant},
      {"Shape", shape_of},
      {"Size", size_of},
      {"Identity", identity},
      {"Cast", cast},
      {"Gather", gather},
      {"Concat", concat},
      {"ConcatTraining", concat},
      {"BroadcastGradientArgs", broadcast_gradient_args},
      {"Unsqueeze", unsqueeze},
      {"Squeeze", squeeze},
      {"Reshape", reshape},
      {"Flatten", flatten_op},
      {"Slice", slice},
      {"Transpose", transpose},
      {"Expand", expand},
      {"ConstantOfShape", constant_of_shape},
      {"Range", range},
      {"Where", where},
      {"Add", arithmetic({std::plus<int64_t>(), std::plus<double>()})},
      {"Sub", arithmetic({std::minus<int64_t>(), std::minus<double>()})},
      {"Mul", arithmetic({std::multiplies<int64_t>(), std::multiplies<double>()})},
      {"Div", arithmetic({int_div, std::divides<double>()})},
      {"Mod", arithmetic({int_mod, [](double a, double b) { return std::fmod(a, b); }})},
      {"Pow", arithmetic({[](int64_t a, int64_t b) { return static_cast<int64_t>(std::pow(a, b)); },
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
      {"Max", [](const NodeProto&, const SmallOpInputs& in) { return variadic_extreme(in, true); }},
      {"Min",
       [](const NodeProto&, const SmallOpInputs& in) { return variadic_extreme(in, false); }},
      {"ReduceSum", reduction(Reduce::kSum)},
      {"ReduceProd", reduction(Reduce::kProd)},
      {"ReduceMax", reduction(Reduce::kMax)},
      {"ReduceMin", reduction(Reduce::kMin)},
  };
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
