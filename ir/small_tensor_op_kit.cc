#include "ir/small_tensor_op_kit.h"

#include <numeric>

namespace memplan::ir::small_ops {

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

Outputs with_dims(const SmallTensor& a, std::vector<int64_t> dims) {
  if (!fits(dims) || element_count(dims) != static_cast<int64_t>(a.size())) return std::nullopt;
  SmallTensor out = a;
  out.dims = std::move(dims);
  return one(std::move(out));
}

}  // namespace memplan::ir::small_ops
