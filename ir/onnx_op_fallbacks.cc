#include "ir/onnx_op_fallbacks.h"

#include <algorithm>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "ir/inference_helpers.h"

namespace memplan::ir {
namespace {

constexpr int kKnownOpset = 17;

int32_t elem_type_of(InferenceContext& ctx, size_t i) {
  return has_input(ctx, i) ? ctx.getInputType(i)->tensor_type().elem_type() : 0;
}

void reshape(InferenceContext& ctx) {
  auto in = known_dims(ctx, 0);
  auto target = shape_values(ctx, 1);
  if (!in || !target) return;
  // Fuzzed models carry any dims: products that overflow give no shape.
  int64_t total = 1;
  for (auto d : *in)
    if (__builtin_mul_overflow(total, d, &total)) return;
  bool allow_zero = int_attr(ctx, "allowzero", 0) != 0;
  std::vector<int64_t> out(*target);
  int64_t known = 1;
  int infer_at = -1;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == 0 && !allow_zero) {
      if (i >= in->size()) return;
      out[i] = (*in)[i];
    }
    if (out[i] == -1) {
      if (infer_at >= 0) return;
      infer_at = static_cast<int>(i);
    } else if (out[i] < -1 || __builtin_mul_overflow(known, out[i], &known)) {
      return;
    }
  }
  if (infer_at >= 0) {
    if (known == 0 || total % known != 0) return;
    out[infer_at] = total / known;
  }
  set_output(ctx, 0, elem_type_of(ctx, 0), out);
}

// numpy broadcasting of two known shapes; nullopt when incompatible.
std::optional<std::vector<int64_t>> broadcast(const std::vector<int64_t>& a,
                                              const std::vector<int64_t>& b) {
  size_t rank = std::max(a.size(), b.size());
  std::vector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i >= rank - a.size() ? a[i - (rank - a.size())] : 1;
    int64_t db = i >= rank - b.size() ? b[i - (rank - b.size())] : 1;
    if (da != db && da != 1 && db != 1) return std::nullopt;
    out[i] = da == 1 ? db : da;
  }
  return out;
}

void expand(InferenceContext& ctx) {
  auto in = known_dims(ctx, 0);
  auto shape = shape_values(ctx, 1);
  if (!in || !shape) return;
  if (auto out = broadcast(*in, *shape)) set_output(ctx, 0, elem_type_of(ctx, 0), *out);
}

void constant_of_shape(InferenceContext& ctx) {
  auto shape = shape_values(ctx, 0);
  if (!shape) return;
  int32_t elem = onnx::TensorProto::FLOAT;
  if (const auto* v = ctx.getAttribute("value"); v != nullptr && v->has_t())
    elem = v->t().data_type();
  set_output(ctx, 0, elem, *shape);
}

void range(InferenceContext& ctx) {
  auto start = shape_values(ctx, 0), limit = shape_values(ctx, 1), delta = shape_values(ctx, 2);
  if (!start || !limit || !delta || start->size() != 1 || limit->size() != 1 ||
      delta->size() != 1 || (*delta)[0] == 0)
    return;
  int64_t s = (*start)[0], l = (*limit)[0], d = (*delta)[0];
  // ceil((limit - start) / delta), at least 0
  int64_t span = l - s;
  int64_t n = span / d + ((span % d != 0 && ((span > 0) == (d > 0))) ? 1 : 0);
  set_output(ctx, 0, elem_type_of(ctx, 0), {std::max<int64_t>(n, 0)});
}

void slice(InferenceContext& ctx) {
  auto in = known_dims(ctx, 0);
  auto starts = shape_values(ctx, 1), ends = shape_values(ctx, 2);
  if (!in || !starts || !ends || starts->size() != ends->size()) return;
  std::vector<int64_t> axes(starts->size()), steps(starts->size(), 1);
  for (size_t i = 0; i < axes.size(); ++i) axes[i] = static_cast<int64_t>(i);
  if (ctx.getNumInputs() > 3 && ctx.getInputType(3) != nullptr) {
    auto a = shape_values(ctx, 3);
    if (!a || a->size() != axes.size()) return;
    axes = *a;
  }
  if (ctx.getNumInputs() > 4 && ctx.getInputType(4) != nullptr) {
    auto s = shape_values(ctx, 4);
    if (!s || s->size() != steps.size()) return;
    steps = *s;
  }
  std::vector<int64_t> out(*in);
  const auto rank = static_cast<int64_t>(in->size());
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t axis = axes[i] < 0 ? axes[i] + rank : axes[i];
    if (axis < 0 || axis >= rank || steps[i] == 0) return;
    int64_t dim = (*in)[axis], step = steps[i];
    auto clamp = [&](int64_t v, int64_t lo, int64_t hi) {
      if (v < 0) v += dim;
      return std::clamp(v, lo, hi);
    };
    int64_t b = step > 0 ? clamp((*starts)[i], 0, dim) : clamp((*starts)[i], -1, dim - 1);
    int64_t e = step > 0 ? clamp((*ends)[i], 0, dim) : clamp((*ends)[i], -1, dim - 1);
    int64_t n = step > 0 ? (e - b + step - 1) / step : (b - e + (-step) - 1) / (-step);
    out[axis] = std::max<int64_t>(n, 0);
  }
  set_output(ctx, 0, elem_type_of(ctx, 0), out);
}

void reduce_sum(InferenceContext& ctx) {
  auto in = known_dims(ctx, 0);
  if (!in) return;
  std::vector<int64_t> axes;
  if (ctx.getNumInputs() > 1 && ctx.getInputType(1) != nullptr) {
    auto a = shape_values(ctx, 1);
    if (!a) return;
    axes = *a;
  }
  bool keep = int_attr(ctx, "keepdims", 1) != 0;
  if (axes.empty() && int_attr(ctx, "noop_with_empty_axes", 0) != 0) {
    set_output(ctx, 0, elem_type_of(ctx, 0), *in);
    return;
  }
  const auto rank = static_cast<int64_t>(in->size());
  std::vector<bool> reduced(in->size(), axes.empty());
  for (auto a : axes) {
    int64_t axis = a < 0 ? a + rank : a;
    if (axis < 0 || axis >= rank) return;
    reduced[axis] = true;
  }
  std::vector<int64_t> out;
  for (size_t i = 0; i < in->size(); ++i) {
    if (!reduced[i]) {
      out.push_back((*in)[i]);
    } else if (keep) {
      out.push_back(1);
    }
  }
  set_output(ctx, 0, elem_type_of(ctx, 0), out);
}

// Where the convolution and pooling ops keep X and W (the kernel); -1: none.
struct ConvInputs {
  int x, w;
};
std::optional<ConvInputs> conv_inputs(const std::string& op) {
  if (op == "Conv" || op == "ConvInteger" || op == "ConvTranspose") return ConvInputs{0, 1};
  if (op == "QLinearConv") return ConvInputs{0, 3};
  if (op == "AveragePool" || op == "MaxPool" || op == "LpPool" || op == "MaxUnpool")
    return ConvInputs{0, -1};
  return std::nullopt;
}

// ONNX 1.12's convolution and pooling inference indexes the strides,
// dilations and X's dims by W's rank without comparing it with X's, and
// divides by the strides: a W of another rank or a zero stride crashes it.
void check_conv(InferenceContext& ctx, ConvInputs in) {
  std::optional<int> x_rank;
  if (onnx::hasInputShape(ctx, in.x)) {
    x_rank = ctx.getInputType(in.x)->tensor_type().shape().dim_size();
    if (*x_rank < 2) fail_shape_inference("input X has rank ", *x_rank, "; at least 2 needed");
  }
  if (in.w >= 0 && x_rank && onnx::hasInputShape(ctx, in.w)) {
    int w_rank = ctx.getInputType(in.w)->tensor_type().shape().dim_size();
    if (w_rank != *x_rank)
      fail_shape_inference("input W has rank ", w_rank, " but X has rank ", *x_rank);
  }
  for (const char* name : {"strides", "dilations", "kernel_shape"}) {
    const auto* a = ctx.getAttribute(name);
    if (a == nullptr) continue;
    for (auto v : a->ints())
      if (v < 1) fail_shape_inference("attribute ", name, " has value ", v, "; each must be >= 1");
  }
}

// ONNX 1.12's LayerNormalization inference indexes X's dims by `axis`
// without a range check.
void check_axis_in_rank(InferenceContext& ctx) {
  if (!onnx::hasInputShape(ctx, 0)) return;
  const auto rank = static_cast<int64_t>(ctx.getInputType(0)->tensor_type().shape().dim_size());
  const auto* a = ctx.getAttribute("axis");
  int64_t axis = a != nullptr ? a->i() : -1;
  if (axis < -rank || axis >= rank)
    fail_shape_inference("attribute axis ", axis, " is out of range for input X of rank ", rank);
}

// ONNX 1.12's inference functions also assume what the ONNX checker would
// have enforced, which memplan does not run: required attributes exist (Scan-9
// dereferences a missing num_scan_inputs), and the op-specific checks above.
// Checking first turns such a node into an inference error, like any other
// malformed node.
onnx::OpSchema with_input_checks(onnx::OpSchema schema) {
  // Ops defined by a function body are inferred through their expansion.
  if (!schema.has_type_and_shape_inference_function()) return schema;
  auto inner = schema.GetTypeAndShapeInferenceFunction();
  std::vector<std::pair<std::string, onnx::AttributeProto::AttributeType>> required;
  for (const auto& [name, attr] : schema.attributes())
    if (attr.required) required.emplace_back(name, attr.type);
  auto conv = conv_inputs(schema.Name());
  bool axis_in_rank = schema.Name() == "LayerNormalization";
  if (required.empty() && !conv && !axis_in_rank) return schema;
  schema.TypeAndShapeInferenceFunction(
      [inner, required, conv, axis_in_rank](InferenceContext& ctx) {
        for (const auto& [name, type] : required) {
          const auto* a = ctx.getAttribute(name);
          if (a == nullptr) fail_shape_inference("required attribute '", name, "' is missing");
          // UNDEFINED: old models leave the type out; the value fields still tell.
          if (a->type() != onnx::AttributeProto::UNDEFINED && a->type() != type)
            fail_shape_inference("attribute '", name, "' has type ",
                                 onnx::AttributeProto::AttributeType_Name(a->type()), ", expected ",
                                 onnx::AttributeProto::AttributeType_Name(type));
        }
        if (conv) check_conv(ctx, *conv);
        if (axis_in_rank) check_axis_in_rank(ctx);
        inner(ctx);
      });
  return schema;
}

}  // namespace

OnnxOpFallbacks::OnnxOpFallbacks() {
  const std::vector<std::pair<const char*, std::function<void(InferenceContext&)>>> ops = {
      {"Reshape", reshape}, {"Expand", expand}, {"ConstantOfShape", constant_of_shape},
      {"Range", range},     {"Slice", slice},   {"ReduceSum", reduce_sum},
  };
  for (const auto& [op, ours] : ops) {
    for (int v = 1; v <= kKnownOpset; ++v) {
      const onnx::OpSchema* onnx_schema = onnx::OpSchemaRegistry::Schema(op, v, "");
      if (onnx_schema == nullptr) continue;
      auto key = std::make_pair(std::string(op), onnx_schema->SinceVersion());
      if (schemas_.count(key) != 0) continue;
      onnx::OpSchema copy = *onnx_schema;
      auto theirs = onnx_schema->GetTypeAndShapeInferenceFunction();
      copy.TypeAndShapeInferenceFunction([theirs, ours = ours](InferenceContext& ctx) {
        try {
          theirs(ctx);
        } catch (const std::exception&) {
          // ONNX's function rejects what it cannot see; ours may still tell.
        }
        if (!output_complete(ctx, 0)) ours(ctx);
      });
      schemas_.emplace(std::move(key), std::move(copy));
    }
  }
  // ONNX 1.12's data propagation for Shape-15 reads input 0's type without a
  // null check, so a Shape fed by an op without a schema (its output has no
  // type) segfaults inside libonnx. With no input type there is nothing to
  // propagate: skip it.
  for (int v = 1; v <= kKnownOpset; ++v) {
    const onnx::OpSchema* onnx_schema = onnx::OpSchemaRegistry::Schema("Shape", v, "");
    if (onnx_schema == nullptr || !onnx_schema->has_data_propagation_function()) continue;
    auto key = std::make_pair(std::string("Shape"), onnx_schema->SinceVersion());
    if (schemas_.count(key) != 0) continue;
    onnx::OpSchema copy = *onnx_schema;
    copy.PartialDataPropagationFunction(
        [theirs = onnx_schema->GetDataPropagationFunction()](onnx::DataPropagationContext& ctx) {
          if (ctx.getNumInputs() == 0 || ctx.getInputType(0) == nullptr) return;
          theirs(ctx);
        });
    schemas_.emplace(std::move(key), std::move(copy));
  }
  for (auto& [key, schema] : schemas_) schema = with_input_checks(std::move(schema));
}

const onnx::OpSchema* OnnxOpFallbacks::find(const std::string& op, int opset) const {
  const onnx::OpSchema* onnx_schema = onnx::OpSchemaRegistry::Schema(op, opset, "");
  if (onnx_schema == nullptr) return nullptr;
  std::lock_guard lock(mutex_);
  auto key = std::make_pair(op, onnx_schema->SinceVersion());
  auto it = schemas_.find(key);
  // Other ops get only the input checks, copied on first use (std::map
  // keeps the address stable for ONNX to hold).
  if (it == schemas_.end())
    it = schemas_.emplace(std::move(key), with_input_checks(*onnx_schema)).first;
  return &it->second;
}

}  // namespace memplan::ir
