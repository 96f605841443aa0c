#pragma once
#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "onnx/defs/schema.h"

namespace memplan::ir {

// ONNX 1.12's shape functions for Reshape, Expand, Slice, Range, ReduceSum
// and ConstantOfShape give up when a shape-carrying input is computed rather
// than constant — which is how exported training graphs build them
// (Shape -> Gather -> Concat). These are copies of ONNX's schemas whose
// inference runs ONNX's function first and, where that leaves an output
// unknown, ours, which reads the values data propagation derived. Shape's
// data propagation is wrapped too, to guard a null dereference in ONNX 1.12,
// and every op's inference first checks what some of ONNX 1.12's functions
// assume without checking (required attributes; ranks and strides of the
// convolution and pooling ops; LayerNormalization's axis), since a malformed
// node crashed them.
class OnnxOpFallbacks {
 public:
  OnnxOpFallbacks();
  // The wrapped schema for a default-domain op at an opset, or nullptr when
  // ONNX has no schema for it.
  const onnx::OpSchema* find(const std::string& op, int opset) const;

 private:
  mutable std::mutex mutex_;
  mutable std::map<std::pair<std::string, int>, onnx::OpSchema> schemas_;  // (op, since_version)
};

}  // namespace memplan::ir
