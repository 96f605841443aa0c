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
  // without a seed, Random*, Bernoulli, Multinomial).
  bool is_random() const;
  // A Dropout (default domain) that outputs its mask: y = x * mask / (1 -
  // ratio) again, bit for bit, from x and that mask (what DropoutGrad
  // computes), so y can be recomputed although the node is random, while
  // the mask is resident. kNoTensor for every other node.
  TensorId dropout_mask() const;
  // Recomputing the node gives back the values it made: not random, or a
  // Dropout recomputed from its mask.
  bool reproducible() const { return !is_random() || dropout_mask() != kNoTensor; }
};

}  // namespace memplan::ir
