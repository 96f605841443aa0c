#pragma once
// Small reads and writes on ONNX's InferenceContext shared by our shape rules.
#include <cstdint>
#include <optional>
#include <vector>

#include "onnx/defs/shape_inference.h"

namespace memplan::ir {

using onnx::InferenceContext;

bool has_input(InferenceContext& ctx, size_t i);
// An int attribute, or `fallback` when the node does not set it.
int64_t int_attr(InferenceContext& ctx, const char* name, int64_t fallback);
// Output `out` gets the element type and shape of input `in`.
void like_input(InferenceContext& ctx, size_t in, size_t out);
void set_output(InferenceContext& ctx, size_t out, int32_t elem_type,
                const std::vector<int64_t>& dims);
// Dims of input i when all are known.
std::optional<std::vector<int64_t>> known_dims(InferenceContext& ctx, size_t i);
// Values of a 0-D or 1-D integer input: a constant, or what data
// propagation derived (Shape -> Gather -> Concat chains).
std::optional<std::vector<int64_t>> shape_values(InferenceContext& ctx, size_t i);
// Output `out` has the shape whose values input `shape_in` holds and the
// element type of input `type_in`.
void shape_from_values(InferenceContext& ctx, size_t shape_in, size_t type_in, size_t out);
// True when output `out` has an element type and every dim known.
bool output_complete(InferenceContext& ctx, size_t out);

}  // namespace memplan::ir
