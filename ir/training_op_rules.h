#pragma once
// Shape rules for the ops ONNX Runtime writes into training graphs that
// ONNX 1.12 has no schema for, registered by TrainingSchemaRegistry.
#include <functional>
#include <vector>

#include "onnx/defs/schema.h"

namespace memplan::ir {

struct TrainingOpRule {
  const char* op;
  std::function<void(onnx::InferenceContext&)> infer;
  onnx::DataPropagationFunction propagate = nullptr;  // values for shape computations
};

// Gradient ops the gradient builder emits (com.microsoft).
std::vector<TrainingOpRule> gradient_op_rules();
// Forward ops ONNX Runtime substitutes in training graphs (ConcatTraining,
// SplitTraining, LSTMTraining, ...) and its schemas in the default domain
// below ONNX's own version (LayerNormalization before opset 17).
std::vector<TrainingOpRule> substituted_op_rules();

}  // namespace memplan::ir
