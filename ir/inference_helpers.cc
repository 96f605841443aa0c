#include "ir/inference_helpers.h"

#include <cstring>

namespace memplan::ir {

bool has_input(InferenceContext& ctx, size_t i) {
  return i < ctx.getNumInputs() && ctx.getInputType(i) != nullptr &&
         ctx.getInputType(i)->has_tensor_type();
}

int64_t int_attr(InferenceContext& ctx, const char* name, int64_t fallback) {
  const auto* a = ctx.getAttribute(name);
  return a != nullptr && a->has_i() ? a->i() : fallback;
}

void like_input(InferenceContext& ctx, size_t in, size_t out) {
  if (out >= ctx.getNumOutputs() || !has_input(ctx, in)) return;
  onnx::propagateElemTypeFromInputToOutput(ctx, in, out);
  if (onnx::hasInputShape(ctx, in)) onnx::propagateShapeFromInputToOutput(ctx, in, out);
}

void set_output(InferenceContext& ctx, size_t out, int32_t elem_type,
                const std::vector<int64_t>& dims) {
  if (out >= ctx.getNumOutputs()) return;
  auto* t = ctx.getOutputType(out)->mutable_tensor_type();
  t->set_elem_type(elem_type);
  auto* shape = t->mutable_shape();
  shape->clear_dim();
  for (int64_t d : dims) shape->add_dim()->set_dim_value(d);
}

std::optional<std::vector<int64_t>> known_dims(InferenceContext& ctx, size_t i) {
  if (!onnx::hasInputShape(ctx, i)) return std::nullopt;
  std::vector<int64_t> dims;
  for (const auto& d : ctx.getInputType(i)->tensor_type().shape().dim()) {
    if (!d.has_dim_value()) return std::nullopt;
    dims.push_back(d.dim_value());
  }
  return dims;
}

std::optional<std::vector<int64_t>> shape_values(InferenceContext& ctx, size_t i) {
  if (i >= ctx.getNumInputs()) return std::nullopt;
  if (const auto* data = ctx.getInputData(i)) {
    std::vector<int64_t> v;
    if (data->data_type() == onnx::TensorProto::INT64) {
      if (!data->raw_data().empty()) {
        v.resize(data->raw_data().size() / sizeof(int64_t));
        std::memcpy(v.data(), data->raw_data().data(), v.size() * sizeof(int64_t));
      } else {
        v.assign(data->int64_data().begin(), data->int64_data().end());
      }
      return v;
    }
    if (data->data_type() == onnx::TensorProto::INT32) {
      if (!data->raw_data().empty()) {
        std::vector<int32_t> w(data->raw_data().size() / sizeof(int32_t));
        std::memcpy(w.data(), data->raw_data().data(), w.size() * sizeof(int32_t));
        v.assign(w.begin(), w.end());
      } else {
        v.assign(data->int32_data().begin(), data->int32_data().end());
      }
      return v;
    }
    return std::nullopt;
  }
  if (const auto* sym = ctx.getSymbolicInput(i)) {
    std::vector<int64_t> v;
    for (const auto& d : sym->dim()) {
      if (!d.has_dim_value()) return std::nullopt;
      v.push_back(d.dim_value());
    }
    return v;
  }
  return std::nullopt;
}

void shape_from_values(InferenceContext& ctx, size_t shape_in, size_t type_in, size_t out) {
  auto dims = shape_values(ctx, shape_in);
  if (!dims || !has_input(ctx, type_in)) return;
  set_output(ctx, out, ctx.getInputType(type_in)->tensor_type().elem_type(), *dims);
}

bool output_complete(InferenceContext& ctx, size_t out) {
  if (out >= ctx.getNumOutputs()) return true;
  const auto* t = ctx.getOutputType(out);
  if (t == nullptr || !t->has_tensor_type() || t->tensor_type().elem_type() == 0 ||
      !t->tensor_type().has_shape())
    return false;
  for (const auto& d : t->tensor_type().shape().dim())
    if (!d.has_dim_value()) return false;
  return true;
}

}  // namespace memplan::ir
