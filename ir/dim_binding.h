#pragma once
#include <cstdint>
#include <map>
#include <string>

#include "onnx/onnx_pb.h"

namespace memplan::ir {

// Replaces every bound symbolic dim (dim_param) in the graph's inputs,
// outputs and value_info by its value, and forgets derived symbolic dims
// (ones that are not on a graph input) so shape inference recomputes them.
// Throws InputError listing the graph-input dims that `dims` leaves unbound,
// and on negative declared dims.
void bind_dims(onnx::ModelProto& model, const std::map<std::string, std::int64_t>& dims,
               const std::string& where);

}  // namespace memplan::ir
