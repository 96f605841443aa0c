#pragma once
// Evaluates one ONNX node on small constant tensors: the ops exported graphs
// compute shapes, masks and scales with (Shape, Gather, Concat, Slice,
// Unsqueeze, arithmetic, comparisons, Where, Range, ConstantOfShape, ...).
#include <optional>
#include <span>
#include <vector>

#include "ir/small_tensor.h"

namespace memplan::ir {

struct SmallOpInputs {
  std::vector<const SmallTensor*> values;                 // nullptr: not constant, or absent
  std::vector<std::optional<std::vector<int64_t>>> dims;  // known dims of each input
};

// The node's outputs, or nullopt when the op is not one we evaluate, an input
// it needs is not constant, or a result would exceed kMaxSmallTensorElements.
std::optional<std::vector<SmallTensor>> evaluate_small_op(const onnx::NodeProto& node,
                                                          const SmallOpInputs& in);

// Whether evaluate_small_op knows the op (default domain, or ConcatTraining).
bool small_op_known(const onnx::NodeProto& node);

}  // namespace memplan::ir
