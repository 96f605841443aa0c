#pragma once
// ONNX Runtime's optimizer_model.onnx as steps of the training graph.
// ORT's AdamW is one com.microsoft AdamWOptimizer node over *sequences*
// (every trainable parameter, gradient and moment at once), which memplan
// cannot size or schedule; one in-place step per parameter can be both.
#include <cstddef>
#include <string>
#include <string_view>

#include "ir/node.h"
#include "onnx/onnx_pb.h"

namespace memplan::ir {

inline constexpr std::string_view kAdamWStepDomain = "ai.memplan";
inline constexpr std::string_view kAdamWStepOp = "AdamWStep";
// ORT's training API names a parameter's moments so in its checkpoints
// (optimizer state "momentum0"/"momentum1", tensors "<p>.exp_avg"/...).
inline constexpr std::string_view kFirstMomentSuffix = ".exp_avg";
inline constexpr std::string_view kSecondMomentSuffix = ".exp_avg_sq";
inline constexpr std::string_view kGradBufferSuffix = "_grad.accumulation.buffer";

// Checks that `optimizer` is ORT's AdamW optimizer model and appends to
// `training`, for each trainable parameter p (a graph input with a graph
// input "<p>_grad.accumulation.buffer", in input order, as ORT's training
// API pairs them), one node ai.memplan AdamWStep with inputs p, that
// buffer, p.exp_avg, p.exp_avg_sq (new graph inputs shaped like p),
// learning_rate and step (new graph inputs typed as the optimizer model
// declares them), and the first output of every node that reads the buffer
// (its accumulator: the step must follow it); output a graph output
// "<p>.adamw_step.updated" (bool [1]). The update is in place: the node
// writes p and its moments, so it makes no copy of them. Returns the number
// of steps. Throws InputError prefixed with `where` for another optimizer,
// a training graph without trainable parameters, or a name already taken.
std::size_t append_adamw_steps(onnx::ModelProto& training, const onnx::ModelProto& optimizer,
                               const std::string& where);

// An AdamWStep node: reads p, g, m, v and writes p, m, v in place.
bool is_adamw_step(const Node& n);

}  // namespace memplan::ir
