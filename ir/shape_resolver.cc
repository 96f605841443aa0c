#include "ir/shape_resolver.h"

#include <algorithm>

#include "ir/training_op_schemas.h"
#include "onnx/shape_inference/implementation.h"

namespace memplan::ir {
namespace {

bool complete(const onnx::TypeProto& t) {
  if (!t.has_tensor_type() || !t.tensor_type().has_shape() || t.tensor_type().elem_type() == 0)
    return false;
  return std::all_of(t.tensor_type().shape().dim().begin(), t.tensor_type().shape().dim().end(),
                     [](const auto& d) { return d.has_dim_value(); });
}

std::unordered_map<std::string, onnx::TypeProto> collect(const onnx::GraphProto& g) {
  std::unordered_map<std::string, onnx::TypeProto> types;
  auto put = [&](const onnx::ValueInfoProto& v) {
    if (!v.has_type()) return;
    auto it = types.find(v.name());
    if (it == types.end() || (!complete(it->second) && complete(v.type()))) types[v.name()] = v.type();
  };
  for (const auto& t : g.initializer()) {
    onnx::TypeProto type;
    type.mutable_tensor_type()->set_elem_type(t.data_type());
    auto* shape = type.mutable_tensor_type()->mutable_shape();
    for (auto d : t.dims()) shape->add_dim()->set_dim_value(d);
    types[t.name()] = type;
  }
  for (const auto& v : g.input()) put(v);
  for (const auto& v : g.value_info()) put(v);
  for (const auto& v : g.output()) put(v);
  return types;
}

// Runs ONNX inference; returns false (with a warning) when it gave up.
bool infer(onnx::ModelProto& model, const TrainingSchemaRegistry& registry,
           std::vector<std::string>& warnings) {
  try {
    // check_type off, node errors non-fatal, data propagation on so shape
    // computations (Shape -> Gather -> Concat -> Reshape) fold to values.
    onnx::ShapeInferenceOptions options(false, 0, true);
    std::unordered_map<std::string, onnx::TensorShapeProto> shape_data;
    onnx::shape_inference::InferShapes(model, &registry, options, &shape_data);
    return true;
  } catch (const std::exception& e) {
    warnings.push_back(std::string("shape inference stopped: ") + e.what());
    return false;
  }
}

}  // namespace

std::unordered_map<std::string, onnx::TypeProto> resolve_types(onnx::ModelProto& model,
                                                                std::vector<std::string>& warnings) {
  static const TrainingSchemaRegistry registry;
  // Declared value_info can disagree with what inference derives (stale
  // shapes in hand-edited graphs): keep it, but fall back to inference alone.
  if (!infer(model, registry, warnings)) {
    model.mutable_graph()->clear_value_info();
    if (!infer(model, registry, warnings)) {
      for (auto& out : *model.mutable_graph()->mutable_output()) out.clear_type();
      infer(model, registry, warnings);
    }
  }
  auto types = collect(model.graph());

  // Gradients without a rule: X_grad is shaped like X. Each round may let
  // inference reach further, so repeat while it helps.
  for (int round = 0; round < 8; ++round) {
    bool added = false;
    for (const auto& node : model.graph().node()) {
      for (const auto& out : node.output()) {
        if (out.empty()) continue;
        auto it = types.find(out);
        if (it != types.end() && complete(it->second)) continue;
        constexpr std::string_view kSuffix = "_grad";
        if (out.size() <= kSuffix.size() || out.compare(out.size() - kSuffix.size(), kSuffix.size(), kSuffix) != 0)
          continue;
        auto base = types.find(out.substr(0, out.size() - kSuffix.size()));
        if (base == types.end() || !complete(base->second)) continue;
        auto* v = model.mutable_graph()->add_value_info();
        v->set_name(out);
        *v->mutable_type() = base->second;
        types[out] = base->second;
        added = true;
      }
    }
    if (!added) break;
    infer(model, registry, warnings);
    types = collect(model.graph());
  }
  return types;
}

}  // namespace memplan::ir
