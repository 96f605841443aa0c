#pragma once
// What the small-tensor evaluators share (small_tensor_ops.cc for arithmetic,
// comparisons and generators, small_tensor_layout_ops.cc for indexing and
// reshaping): attribute reads, input access, broadcasting and indexing.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/small_tensor.h"
#include "ir/small_tensor_ops.h"

namespace memplan::ir::small_ops {

using onnx::NodeProto;
using Outputs = std::optional<std::vector<SmallTensor>>;
using Eval = std::function<Outputs(const NodeProto&, const SmallOpInputs&)>;
using EvalTable = std::unordered_map<std::string, Eval>;

const onnx::AttributeProto* attr(const NodeProto& n, const char* name);
int64_t int_attr(const NodeProto& n, const char* name, int64_t fallback);
std::optional<std::vector<int64_t>> ints_attr(const NodeProto& n, const char* name);
// Input i's constant value, or nullptr.
const SmallTensor* value(const SmallOpInputs& in, std::size_t i);
bool present(const NodeProto& n, int i);
// Integer list from input i, or from attribute `name` where the op's older
// versions kept it there; empty when the input is absent, nullopt when it
// is not constant.
std::optional<std::vector<int64_t>> ints_from(const NodeProto& n, const SmallOpInputs& in, int i,
                                              const char* name);
// Every dim non-negative and the element count within kMaxSmallTensorElements.
bool fits(const std::vector<int64_t>& dims);
inline int64_t normalized_axis(int64_t axis, int64_t rank) { return axis < 0 ? axis + rank : axis; }
inline Outputs one(SmallTensor v) { return std::vector<SmallTensor>{std::move(v)}; }
SmallTensor ints_vector(std::vector<int64_t> values);

// numpy broadcasting: the common dims, and for an input of dims `in` the
// flat index it supplies to each element of the output.
std::optional<std::vector<int64_t>> broadcast_dims(const std::vector<const SmallTensor*>& args);
std::vector<std::size_t> broadcast_offsets(const std::vector<int64_t>& in,
                                           const std::vector<int64_t>& out);

// Copies elements from `a` by a map from output index to input index.
SmallTensor gather_elements(const SmallTensor& a, std::vector<int64_t> dims,
                            const std::function<std::size_t(std::size_t)>& source);
// The multi-index of flat k under `strides`, and back.
std::vector<int64_t> unflatten(std::size_t k, const std::vector<int64_t>& strides);
int64_t flatten(const std::vector<int64_t>& idx, const std::vector<int64_t>& strides);
// `a` with new dims of the same element count.
Outputs with_dims(const SmallTensor& a, std::vector<int64_t> dims);

// Gather, Concat / ConcatTraining, Unsqueeze, Squeeze, Reshape, Flatten,
// Slice, Transpose, Expand.
void add_layout_evaluators(EvalTable& table);

}  // namespace memplan::ir::small_ops
