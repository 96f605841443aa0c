#pragma once
#include <string>
#include <unordered_map>
#include <vector>

#include "onnx/onnx_pb.h"

namespace memplan::ir {

// Types of every value of the main graph that ONNX shape inference (with
// data propagation and our training-op rules) can tell, by name. The model
// must have its symbolic dims bound already; it is changed in place (value_info
// grows). Where a gradient op has no rule, an output named "<X>_grad" (ONNX
// Runtime's naming) takes X's shape: a gradient has its variable's shape.
std::unordered_map<std::string, onnx::TypeProto> resolve_types(onnx::ModelProto& model,
                                                                std::vector<std::string>& warnings);

}  // namespace memplan::ir
