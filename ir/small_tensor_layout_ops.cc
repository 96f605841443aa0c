// Indexing and reshaping of small constant tensors.
#include <algorithm>
#include <limits>
#include <vector>

#include "ir/small_tensor_op_kit.h"

namespace memplan::ir::small_ops {
namespace {

using onnx::TensorProto;

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
  // Bounds clamp into [-1, dim] first, so nothing below can overflow.
  auto clamp = [&](int64_t v, int64_t lo, int64_t hi) {
    if (v < 0) v = v < -dim ? lo : v + dim;
    return std::clamp(v, lo, hi);
  };
  const int64_t b = step > 0 ? clamp(start, 0, dim) : clamp(start, -1, dim - 1);
  const int64_t e = step > 0 ? clamp(end, 0, dim) : clamp(end, -1, dim - 1);
  const int64_t span = step > 0 ? e - b : b - e;
  const int64_t stride =
      step > 0 ? step : (step == std::numeric_limits<int64_t>::min() ? dim + 1 : -step);
  return SliceAxis{b, step, span > 0 ? (span - 1) / stride + 1 : 0};
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
  std::vector<bool> used(perm.size(), false);
  for (int64_t p : perm) {
    if (p < 0 || p >= a->rank() || used[static_cast<std::size_t>(p)]) return std::nullopt;
    used[static_cast<std::size_t>(p)] = true;
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

}  // namespace

void add_layout_evaluators(EvalTable& table) {
  table.insert({{"Gather", gather},
                {"Concat", concat},
                {"ConcatTraining", concat},
                {"Unsqueeze", unsqueeze},
                {"Squeeze", squeeze},
                {"Reshape", reshape},
                {"Flatten", flatten_op},
                {"Slice", slice},
                {"Transpose", transpose},
                {"Expand", expand}});
}

}  // namespace memplan::ir::small_ops
