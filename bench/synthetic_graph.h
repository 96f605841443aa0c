#pragma once
// Synthetic training graphs of any size for the benchmarks: a pre-LN
// transformer stack (attention + FFN per layer) with a mirrored backward
// that reads the forward activations, written the way ONNX Runtime's
// generate_artifacts writes the fixtures (parameters and gradient
// accumulation buffers as graph inputs, com.microsoft gradient ops,
// InPlaceAccumulatorV2 per parameter). So the loader, the analyses and the
// planner see nothing they would not see in a real model, only more of it.
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

#include "ir/device.h"
#include "ir/graph.h"
#include "onnx/onnx_pb.h"

namespace memplan::bench {

struct SyntheticOptions {
  // The graph gets as many whole layers as bring it closest to this count.
  std::size_t target_nodes = 1000;
  // Picks which layers have attention dropout, each layer's FFN width and
  // the jitter of node times; the same seed gives the same bytes.
  std::uint64_t seed = 1;
  std::int64_t hidden = 768;
  std::int64_t heads = 12;
  std::int64_t vocab = 8192;
  double dropout_share = 0.5;  // share of layers with dropout on attention probs
};

struct SyntheticModel {
  onnx::ModelProto proto;  // graph inputs `x` [batch, seq, hidden] and `labels` [batch, seq]
  std::size_t layers = 0;
  std::size_t nodes = 0;
};

SyntheticModel make_synthetic_model(const SyntheticOptions& options);

// Per-node times as a profile would give them: the device's roofline for
// the node, times a seeded factor in [0.8, 1.2) (measured kernels scatter
// around any model; identical times would make ties everywhere).
std::map<std::string, double> synthetic_node_seconds(const ir::Graph& graph,
                                                     const ir::DeviceSpec& device,
                                                     std::uint64_t seed);

// A memplan.costs file (COSTS_FORMAT.md §1) with those times.
std::string synthetic_costs_json(const ir::DeviceSpec& device,
                                 const std::map<std::string, double>& node_seconds);

}  // namespace memplan::bench
