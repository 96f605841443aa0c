#pragma once
// The ai.memplan domain: SwapOut (device -> host copy) and SwapIn (host ->
// device copy) as model-local functions whose body is Identity. A stock
// runtime inlines them and runs the model unchanged; memplan's runtime sees
// the op types and issues real copies on its transfer streams.
#include <string_view>

#include "onnx/onnx_pb.h"

namespace memplan::passes {

inline constexpr std::string_view kMemplanDomain = "ai.memplan";
inline constexpr std::string_view kSwapOutOp = "SwapOut";
inline constexpr std::string_view kSwapInOp = "SwapIn";
inline constexpr int kMemplanDomainVersion = 1;

// A node of op `op` (SwapOut or SwapIn) in the ai.memplan domain.
onnx::NodeProto make_swap_node(std::string_view op, const std::string& name,
                               const std::string& input, const std::string& output);

// Adds the opset import of ai.memplan and the function `op` (once; an
// older definition of it, from a model rewritten before, is replaced).
// Model-local functions need IR version 8, so an older model is raised to 8.
void define_swap_function(onnx::ModelProto& model, std::string_view op);

bool is_swap_node(const onnx::NodeProto& node, std::string_view op);

}  // namespace memplan::passes
