#pragma once
// What a rewritten model swaps and recomputes, grouped by layer, read from
// the model alone (for `memplan explain`).
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "onnx/onnx_pb.h"

namespace memplan::passes {

// The layer a node belongs to, from its name: the first path component, cut
// after its first all-digit dotted part. "/transformer.h.3.attn/MatMul" ->
// "/transformer.h.3", "/layer3.1/conv2/Conv" -> "/layer3.1", "/fc1/Gemm" ->
// "/fc1"; a name without a leading '/' (ORT's GradientAccumulator7) ->
// "(unscoped)".
std::string layer_of(std::string_view node_name);

struct SwappedTensor {
  std::string tensor;       // the name it was swapped out under
  std::size_t reloads = 0;  // SwapIn nodes of its host copy
};

struct RecomputedNode {
  std::string node;  // the original node's name
  std::size_t clones = 0;
};

struct LayerReport {
  std::string layer;
  std::vector<SwappedTensor> swaps;        // in the model's order
  std::vector<RecomputedNode> recomputes;  // in the model's order
};

// Layers with at least one swap or recompute, in the order their first node
// appears in the model. A tensor belongs to the layer of the node that makes
// it ("(inputs)" for graph inputs and initializers).
std::vector<LayerReport> layer_report(const onnx::ModelProto& model);

}  // namespace memplan::passes
