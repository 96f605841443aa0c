#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ir/tensor.h"

namespace memplan::ir {

// The attributes the analyses look at (strides, transposes, seeds); tensor
// and graph attributes stay in the ONNX model.
struct Attributes {
  std::map<std::string, std::vector<std::int64_t>, std::less<>> ints;  // INT and INTS
  std::map<std::string, std::vector<double>, std::less<>> floats;      // FLOAT and FLOATS
  std::map<std::string, std::string, std::less<>> strings;

  std::int64_t int_or(std::string_view key, std::int64_t fallback) const;
};

struct Node {
  std::string name;  // unique; unnamed ONNX nodes get "<op>_<index>"
  std::string op_type;
  std::string domain;  // "" for the default ONNX domain
  // Tensors read, in slot order, without the empty optional slots; also the
  // outer-scope tensors that a subgraph attribute (If/Loop/Scan) reads.
  std::vector<TensorId> inputs;
  std::vector<TensorId> outputs;  // without empty optional slots
  Attributes attrs;
  bool is_forward = false;  // the loss depends on it (see ForwardBackwardSplit)

  // Output differs between runs given the same inputs (Dropout in training
  // without a seed, ONNX Runtime's fused dropouts, Random*, Bernoulli,
  // Multinomial).
  bool is_random() const;
  // The mask output of a dropout that outputs it: Dropout (default domain),
  // or ONNX Runtime's fused BitmaskDropout, BiasDropout and
  // BitmaskBiasDropout (com.microsoft; a uint32 bit-packed mask for the
  // Bitmask forms). Their output is remade from the inputs and that mask
  // (DropoutGrad or BitmaskDropoutGrad, after Add(data, bias) and before
  // Add(residual) for the bias forms), so it can be recomputed although
  // the node is random, while the mask is resident. kNoTensor for every
  // other node, and for these ops without the mask output.
  TensorId dropout_mask() const;
  // Recomputing the node gives back the values it made: not random, or a
  // dropout recomputed from its mask.
  bool reproducible() const { return !is_random() || dropout_mask() != kNoTensor; }
};

}  // namespace memplan::ir
