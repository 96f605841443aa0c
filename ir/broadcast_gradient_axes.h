#pragma once
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace memplan::ir {

// What ONNX Runtime's BroadcastGradientArgs(a_shape, b_shape) computes: the
// axes along which the gradients of A and B are summed after a broadcasting
// op; nullopt when the shapes do not broadcast.
std::optional<std::pair<std::vector<int64_t>, std::vector<int64_t>>> broadcast_gradient_axes(
    const std::vector<int64_t>& a, const std::vector<int64_t>& b);

}  // namespace memplan::ir
