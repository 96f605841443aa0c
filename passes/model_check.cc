#include "passes/model_check.h"

#include "ir/training_op_schemas.h"
#include "onnx/checker.h"
#include "onnx/shape_inference/implementation.h"

namespace memplan::passes {

std::string checker_problem(const onnx::ModelProto& model) {
  onnx::ModelProto copy = model;
  if (copy.ir_version() > onnx::Version::IR_VERSION) copy.set_ir_version(onnx::Version::IR_VERSION);
  try {
    onnx::checker::check_model(copy);
  } catch (const std::exception& e) {
    return e.what();
  }
  return {};
}

std::string shape_inference_problem(const onnx::ModelProto& model) {
  static const ir::TrainingSchemaRegistry registry;
  onnx::ModelProto copy = model;
  try {
    onnx::ShapeInferenceOptions options(/*check_type=*/true, /*strict_mode=*/1,
                                        /*data_prop=*/false);
    onnx::shape_inference::InferShapes(copy, &registry, options);
  } catch (const std::exception& e) {
    return e.what();
  }
  return {};
}

}  // namespace memplan::passes
