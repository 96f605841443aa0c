#include "ir/training_op_rules.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "ir/broadcast_gradient_axes.h"
#include "ir/inference_helpers.h"
#include "onnx/defs/shape_inference.h"

namespace memplan::ir {
namespace {

using onnx::InferenceContext;

// MatMul with optional transposes of the last two dims and numpy batch
// broadcasting, as com.microsoft FusedMatMul defines it.
void fused_matmul(InferenceContext& ctx) {
  auto a = known_dims(ctx, 0);
  auto b = known_dims(ctx, 1);
  if (!a || !b || a->size() < 2 || b->size() < 2) return;
  if (int_attr(ctx, "transA", 0) != 0) std::swap((*a)[a->size() - 1], (*a)[a->size() - 2]);
  if (int_attr(ctx, "transB", 0) != 0) std::swap((*b)[b->size() - 1], (*b)[b->size() - 2]);
  size_t rank = std::max(a->size(), b->size());
  std::vector<int64_t> out(rank);
  for (size_t i = 0; i + 2 < rank; ++i) {
    int64_t da = i >= rank - a->size() ? (*a)[i - (rank - a->size())] : 1;
    int64_t db = i >= rank - b->size() ? (*b)[i - (rank - b->size())] : 1;
    out[i] = da == 1 ? db : da;
  }
  out[rank - 2] = (*a)[a->size() - 2];
  out[rank - 1] = (*b)[b->size() - 1];
  set_output(ctx, 0, ctx.getInputType(0)->tensor_type().elem_type(), out);
}

std::optional<std::vector<int64_t>> dims_of(const onnx::TensorShapeProto* p) {
  if (p == nullptr) return std::nullopt;
  std::vector<int64_t> v;
  for (const auto& d : p->dim()) {
    if (!d.has_dim_value()) return std::nullopt;
    v.push_back(d.dim_value());
  }
  return v;
}

void broadcast_gradient_args(InferenceContext& ctx) {
  auto a = shape_values(ctx, 0), b = shape_values(ctx, 1);
  if (!a || !b) return;
  if (auto axes = broadcast_gradient_axes(*a, *b)) {
    set_output(ctx, 0, onnx::TensorProto::INT64, {static_cast<int64_t>(axes->first.size())});
    set_output(ctx, 1, onnx::TensorProto::INT64, {static_cast<int64_t>(axes->second.size())});
  }
}

void broadcast_gradient_args_data(onnx::DataPropagationContext& ctx) {
  if (ctx.getNumInputs() < 2) return;
  auto a = dims_of(ctx.getInputData(0)), b = dims_of(ctx.getInputData(1));
  if (!a || !b) return;
  auto axes = broadcast_gradient_axes(*a, *b);
  if (!axes) return;
  auto to_proto = [](const std::vector<int64_t>& v) {
    onnx::TensorShapeProto p;
    for (auto x : v) p.add_dim()->set_dim_value(x);
    return p;
  };
  // An unused output has the empty name, which ONNX keys its data by too:
  // a second such node then "already has" data there, harmlessly.
  auto add = [&](size_t i, const std::vector<int64_t>& v) {
    try {
      ctx.addOutputData(i, to_proto(v));
    } catch (const std::exception&) {
    }
  };
  add(0, axes->first);
  if (ctx.getNumOutputs() > 1) add(1, axes->second);
}

// Outputs that take input shapes, per op: {output, input} pairs.
std::function<void(InferenceContext&)> copies(std::vector<std::pair<size_t, size_t>> pairs) {
  return [pairs = std::move(pairs)](InferenceContext& ctx) {
    for (auto [out, in] : pairs) like_input(ctx, in, out);
  };
}

// ConvTransposeGrad: dX like X, dW like W, dB one per output channel
// (W is [C_in, C_out / group, k...]).
void conv_transpose_grad(InferenceContext& ctx) {
  like_input(ctx, 1, 0);
  like_input(ctx, 2, 1);
  if (auto w = known_dims(ctx, 2); w && w->size() > 1)
    set_output(ctx, 2, ctx.getInputType(2)->tensor_type().elem_type(),
               {(*w)[1] * int_attr(ctx, "group", 1)});
}

// MatMulBnb4(A, B, absmax): A [..., K] times a packed [K, N] -> [..., N].
void matmul_bnb4(InferenceContext& ctx) {
  auto a = known_dims(ctx, 0);
  if (!a || a->empty()) return;
  a->back() = int_attr(ctx, "N", 0);
  set_output(ctx, 0, ctx.getInputType(0)->tensor_type().elem_type(), *a);
}

// FlattenAndUnpad(input [M1, M2, d...], indices [n]) -> [n, d...] and the
// two flattened dims; PadAndUnflatten undoes it from those dims' values.
void flatten_and_unpad(InferenceContext& ctx) {
  auto in = known_dims(ctx, 0), idx = known_dims(ctx, 1);
  if (!in || !idx || in->size() < 2 || idx->size() != 1) return;
  std::vector<int64_t> out{(*idx)[0]};
  out.insert(out.end(), in->begin() + 2, in->end());
  set_output(ctx, 0, ctx.getInputType(0)->tensor_type().elem_type(), out);
  set_output(ctx, 1, onnx::TensorProto::INT64, {2});
}

void pad_and_unflatten(InferenceContext& ctx) {
  auto in = known_dims(ctx, 0);
  auto dims = shape_values(ctx, 2);
  if (!in || !dims || in->empty() || dims->size() != 2) return;
  std::vector<int64_t> out = *dims;
  out.insert(out.end(), in->begin() + 1, in->end());
  set_output(ctx, 0, ctx.getInputType(0)->tensor_type().elem_type(), out);
}

// Every output like the input in the same slot (PassThrough, NcclAllReduce).
void mirror(InferenceContext& ctx) {
  for (size_t i = 0; i < ctx.getNumOutputs(); ++i) like_input(ctx, i, i);
}

// ONNX's own inference for the op at `opset`: ORT ops that compute what an
// ONNX op does (ShrunkenGather is Gather, ReduceSumTraining is ReduceSum-13).
std::function<void(InferenceContext&)> as_onnx(const char* op, int opset) {
  return [op, opset](InferenceContext& ctx) {
    if (const auto* s = onnx::OpSchemaRegistry::Schema(op, opset, ""))
      s->GetTypeAndShapeInferenceFunction()(ctx);
  };
}

std::function<void(InferenceContext&)> flag(std::vector<int64_t> dims) {
  return [dims](InferenceContext& ctx) { set_output(ctx, 0, onnx::TensorProto::BOOL, dims); };
}

// MixedPrecisionScale(S, X...): each X cast to `to`, or all of them fused
// into one flat tensor.
void mixed_precision_scale(InferenceContext& ctx) {
  const auto to = static_cast<int32_t>(int_attr(ctx, "to", 0));
  int64_t total = 0;
  for (size_t i = 1; i < ctx.getNumInputs(); ++i) {
    auto d = known_dims(ctx, i);
    if (!d) return;
    int64_t n = 1;
    for (int64_t v : *d) n *= v;
    total += n;
    if (int_attr(ctx, "fuse_outputs", 0) == 0) set_output(ctx, i - 1, to, *d);
  }
  if (int_attr(ctx, "fuse_outputs", 0) != 0) set_output(ctx, 0, to, {total});
}

// SoftmaxCrossEntropy (com.microsoft) and SparseSoftmaxCrossEntropy: the
// loss is a scalar, or per label with reduction "none"; log_prob like scores.
void softmax_cross_entropy(InferenceContext& ctx) {
  const auto* r = ctx.getAttribute("reduction");
  if (has_input(ctx, 0)) {
    auto elem = ctx.getInputType(0)->tensor_type().elem_type();
    if (r == nullptr || r->s() != "none") {
      set_output(ctx, 0, elem, {});
    } else if (auto l = known_dims(ctx, 1)) {
      set_output(ctx, 0, elem, *l);
    }
  }
  like_input(ctx, 0, 1);
}

// Elementwise gradients and the fused activations.
std::vector<TrainingOpRule> activation_rules() {
  const auto first = copies({{0, 0}});
  return {
      // Elementwise gradients and activations: dX is shaped like dY / X.
      {"ReluGrad", first},
      {"GeluGrad", first},
      {"FastGeluGrad", first},
      {"BiasGeluGrad_dX", first},
      {"BiasFastGeluGrad_dX", first},
      {"SigmoidGrad", first},
      {"TanhGrad", first},
      {"QuickGeluGrad", first},
      {"SoftmaxGrad", first},
      {"SoftmaxGrad_13", first},
      {"LogSoftmaxGrad", first},
      {"LogSoftmaxGrad_13", first},
      {"Gelu", first},
      {"FastGelu", first},
      {"BiasGelu", first},
      {"QuickGelu", first},
      {"DropoutGrad", first},
      {"BitmaskDropoutGrad", first},
      {"BiasDropout",
       [](InferenceContext& ctx) {
         like_input(ctx, 0, 0);
         like_input(ctx, 0, 1);  // the mask: data's shape, bool
         if (ctx.getNumOutputs() > 1)
           ctx.getOutputType(1)->mutable_tensor_type()->set_elem_type(onnx::TensorProto::BOOL);
       }},
      {"BitmaskDropout",
       [](InferenceContext& ctx) {
         like_input(ctx, 0, 0);
         if (auto d = known_dims(ctx, 0)) {  // one bit per element, in uint32 words
           int64_t n = 1;
           for (int64_t v : *d) n *= v;
           set_output(ctx, 1, onnx::TensorProto::UINT32, {(n + 31) / 32});
         }
       }},
  };
}

// Gradients with structure: normalisation, convolution, loss, scatter-style.
std::vector<TrainingOpRule> structured_gradient_rules() {
  const auto first = copies({{0, 0}});
  return {
      // Normalisation gradients: dX like X (input 1), dScale/dBias like scale.
      {"LayerNormalizationGrad", copies({{0, 1}, {1, 2}, {2, 2}})},
      {"SimplifiedLayerNormalizationGrad", copies({{0, 1}, {1, 2}})},
      {"InvertibleLayerNormalizationGrad", copies({{0, 1}, {1, 2}, {2, 2}})},
      {"BatchNormalizationGrad", copies({{0, 1}, {1, 2}, {2, 2}})},
      {"ConvGrad",
       [](InferenceContext& ctx) {
         like_input(ctx, 1, 0);
         like_input(ctx, 2, 1);
         if (auto w = known_dims(ctx, 2); w && !w->empty())
           set_output(ctx, 2, ctx.getInputType(2)->tensor_type().elem_type(), {(*w)[0]});
       }},
      {"FusedMatMul", fused_matmul},
      {"Scale", first},
      // Training-mode BatchNorm: Y like X; running and saved stats like scale.
      {"BatchNormInternal", copies({{0, 0}, {1, 1}, {2, 1}, {3, 1}, {4, 1}})},
      {"BroadcastGradientArgs", broadcast_gradient_args, broadcast_gradient_args_data},
      // Loss: reduction none keeps the label's shape, else a scalar.
      {"SoftmaxCrossEntropyLossInternal",
       [](InferenceContext& ctx) {
         const auto* r = ctx.getAttribute("reduction");
         bool none = r != nullptr && r->s() == "none";
         if (has_input(ctx, 0)) {
           auto elem = ctx.getInputType(0)->tensor_type().elem_type();
           if (!none) {
             set_output(ctx, 0, elem, {});
           } else if (auto l = known_dims(ctx, 1)) {
             set_output(ctx, 0, elem, *l);
           }
         }
         like_input(ctx, 0, 1);
       }},
      {"SoftmaxCrossEntropyLossInternalGrad", copies({{0, 1}})},
      {"SoftmaxCrossEntropyLossGrad", copies({{0, 1}})},
      // Gradient accumulation: a bool flag, and the buffer when asked for.
      {"InPlaceAccumulatorV2",
       [](InferenceContext& ctx) {
         set_output(ctx, 0, onnx::TensorProto::BOOL, {1});
         like_input(ctx, 0, 1);
       }},
      {"InPlaceAccumulator", copies({{0, 0}})},
      {"ZeroGradient", copies({{0, 0}})},
      // Scatter-style gradients take the forward input's shape from data.
      {"GatherGrad", [](InferenceContext& ctx) { shape_from_values(ctx, 0, 2, 0); }},
      {"GatherElementsGrad", [](InferenceContext& ctx) { shape_from_values(ctx, 1, 0, 0); }},
      {"SliceGrad", [](InferenceContext& ctx) { shape_from_values(ctx, 1, 0, 0); }},
      {"GatherNDGrad", [](InferenceContext& ctx) { shape_from_values(ctx, 0, 2, 0); }},
  };
}

// The rest of what ONNX Runtime 1.19's gradient builders emit.
std::vector<TrainingOpRule> further_gradient_rules() {
  const auto first = copies({{0, 0}});
  return {
      {"LeakyReluGrad", first},
      {"FakeQuantGrad", first},
      {"Trilu", first},
      {"SoftmaxDropoutGrad", first},
      {"DivGrad", copies({{0, 1}, {1, 2}})},
      {"ResizeGrad", copies({{0, 1}})},
      {"ConvTransposeGrad", conv_transpose_grad},
      {"SoftmaxCrossEntropyGrad", copies({{0, 1}})},
      {"SparseSoftmaxCrossEntropyGrad", copies({{0, 1}})},
      {"MatMulBnb4", matmul_bnb4},
      {"BatchScale", copies({{0, 0}, {1, 0}, {2, 0}})},
      {"FlattenAndUnpad", flatten_and_unpad},
      {"PadAndUnflatten", pad_and_unflatten},
      {"ReduceSumTraining", as_onnx("ReduceSum", 13)},
      {"NcclAllReduce", mirror},
      {"PassThrough", mirror},
      {"Send", flag({})},
  };
}

// Forward ops of the ORTModule / CUDA fusions, should a graph carry them.
std::vector<TrainingOpRule> fusion_rules() {
  const auto first = copies({{0, 0}});
  return {
      {"ShrunkenGather", as_onnx("Gather", 13)},
      {"ScaledSum", first},
      {"FakeQuant",
       [](InferenceContext& ctx) {
         like_input(ctx, 0, 0);
         if (auto d = known_dims(ctx, 0)) set_output(ctx, 1, onnx::TensorProto::BOOL, *d);
       }},
      {"BitmaskBiasDropout",
       [](InferenceContext& ctx) {
         like_input(ctx, 0, 0);
         if (auto d = known_dims(ctx, 0)) {
           int64_t n = 1;
           for (int64_t v : *d) n *= v;
           set_output(ctx, 1, onnx::TensorProto::UINT32, {(n + 31) / 32});
         }
       }},
      {"BiasSoftmaxDropout",
       [](InferenceContext& ctx) {
         like_input(ctx, 0, 0);
         like_input(ctx, 0, 2);
         if (auto d = known_dims(ctx, 0)) set_output(ctx, 1, onnx::TensorProto::BOOL, *d);
       }},
      {"SoftmaxCrossEntropy", softmax_cross_entropy},
      {"SparseSoftmaxCrossEntropy", softmax_cross_entropy},
  };
}

// Optimizer and accumulation blocks (onnxblock) and their helpers.
std::vector<TrainingOpRule> optimizer_rules() {
  return {
      {"AdamWOptimizer", flag({1})},
      {"SGDOptimizerV2", flag({})},
      {"InplaceClipGradNorm",
       [](InferenceContext& ctx) {
         if (ctx.getNumInputs() > 0 && ctx.getInputType(0) != nullptr && ctx.getNumOutputs() > 0)
           ctx.getOutputType(0)->CopyFrom(*ctx.getInputType(0));
       }},
      {"ReduceAllL2",
       [](InferenceContext& ctx) {
         if (has_input(ctx, 0))
           set_output(ctx, 0, ctx.getInputType(0)->tensor_type().elem_type(), {});
       }},
      {"MixedPrecisionScale", mixed_precision_scale},
      {"IsAllFinite", flag({})},
      {"Group", flag({})},
      {"IsFinite",
       [](InferenceContext& ctx) {
         if (auto d = known_dims(ctx, 0)) set_output(ctx, 0, onnx::TensorProto::BOOL, *d);
       }},
      {"View",
       [](InferenceContext& ctx) {
         for (size_t i = 0; i + 1 < ctx.getNumInputs(); ++i) shape_from_values(ctx, i + 1, 0, i);
       }},
  };
}

}  // namespace

std::vector<TrainingOpRule> gradient_op_rules() {
  std::vector<TrainingOpRule> all;
  for (auto part : {activation_rules, structured_gradient_rules, further_gradient_rules,
                    fusion_rules, optimizer_rules})
    for (auto& rule : part()) all.push_back(std::move(rule));
  return all;
}

}  // namespace memplan::ir
