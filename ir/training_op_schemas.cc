#include "ir/training_op_schemas.h"

#include <string_view>
#include <utility>
#include <vector>

#include "ir/training_op_rules.h"

namespace memplan::ir {

TrainingSchemaRegistry::TrainingSchemaRegistry() {
  std::vector<TrainingOpRule> all = gradient_op_rules();
  for (auto& rule : substituted_op_rules()) all.push_back(std::move(rule));
  for (auto& rule : all) {
    onnx::OpSchema s;
    // One variadic, heterogeneous input and output list: the rules read
    // slots by index, and no arity is checked here (ORT validates its ops).
    s.SetName(rule.op)
        .SetDomain("com.microsoft")
        .SinceVersion(1)
        .Input(0, "inputs", "", "T", onnx::OpSchema::Variadic, false, 0)
        .Output(0, "outputs", "", "T", onnx::OpSchema::Variadic, false, 0)
        .TypeConstraint("T", onnx::OpSchema::all_tensor_types_with_bfloat(), "")
        .TypeAndShapeInferenceFunction(rule.infer);
    if (rule.propagate) s.PartialDataPropagationFunction(rule.propagate);
    s.Finalize();
    schemas_.emplace(rule.op, std::move(s));
  }
}

const onnx::OpSchema* TrainingSchemaRegistry::GetSchema(const std::string& key,
                                                        int maxInclusiveVersion,
                                                        const std::string& domain) const {
  if (domain == "com.microsoft") {
    auto it = schemas_.find(key);
    return it == schemas_.end() ? nullptr : &it->second;
  }
  if (domain.empty() || domain == "ai.onnx") {
    if (const auto* wrapped = fallbacks_.find(key, maxInclusiveVersion)) return wrapped;
  }
  if (const auto* schema = onnx::OpSchemaRegistry::Schema(key, maxInclusiveVersion, domain))
    return schema;
  // ORT writes some of its training ops (MaxPoolGrad) into the default domain.
  if (domain.empty()) {
    auto it = schemas_.find(key);
    if (it != schemas_.end()) return &it->second;
  }
  return nullptr;
}

std::vector<std::string> TrainingSchemaRegistry::covered_ops() const {
  std::vector<std::string> ops;
  for (const auto& [name, schema] : schemas_) ops.push_back(name);
  return ops;
}

}  // namespace memplan::ir
