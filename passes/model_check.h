#pragma once
// Whether a (rewritten) model is well formed for stock ONNX tooling: the
// ONNX checker and ONNX shape inference, as this build's ONNX has them.
#include <string>

#include "onnx/onnx_pb.h"

namespace memplan::passes {

// onnx::checker::check_model on a copy whose IR version is clamped to what
// this ONNX knows (Debian's 1.12 knows IR 8; newer writers stamp 9 or 10
// without using anything newer in a training graph). Empty when it passes,
// else the checker's message.
std::string checker_problem(const onnx::ModelProto& model);

// ONNX shape inference in strict mode (type checks on, node errors fatal),
// with memplan's rules for ONNX Runtime's training ops and through
// model-local functions. Empty when it passes, else its message.
std::string shape_inference_problem(const onnx::ModelProto& model);

}  // namespace memplan::passes
