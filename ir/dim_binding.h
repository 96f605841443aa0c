#pragma once
#include <cstdint>
#include <map>
#include <set>
#include <string>

#include "onnx/onnx_pb.h"

namespace memplan::ir {

// Replaces every bound symbolic dim (dim_param) in the graph's inputs,
// outputs and value_info by its value, and forgets derived symbolic dims
// (ones that are not on a graph input) so shape inference recomputes them.
// Throws InputError listing the graph-input dims that `dims` leaves unbound,
// and on negative declared dims. Returns the names of `dims` that no
// dim_param of the graph has (a misspelt --dim), for a warning.
std::set<std::string> bind_dims(onnx::ModelProto& model,
                                const std::map<std::string, std::int64_t>& dims,
                                const std::string& where);

}  // namespace memplan::ir
