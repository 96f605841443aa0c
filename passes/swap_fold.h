#pragma once
// Swapped values that ONNX Runtime never makes: a Transpose of X, or X times
// (or over) a constant scalar. From its EXTENDED level on, ORT folds such an
// op into the readers of its output (MatMulScaleFusion puts the scale in a
// MatMul's alpha; the transpose optimizer pushes a Transpose through the
// ops after it), so in the original the backward reads X, and the swapped
// copy of the op's output is a value ORT cannot fold: the gradient's last
// bits change (swin_tiny's attention scale, convnext_tiny's layer layout).
// The rewrite swaps X instead, of the same size, and redoes the op on the
// reloaded X, where ORT folds it as in the original.
#include <optional>
#include <vector>

#include "ir/graph.h"

namespace memplan::passes {

struct SwapFold {
  ir::NodeId op = ir::kNoNode;         // the Transpose, Mul or Div that makes the swapped value
  ir::TensorId input = ir::kNoTensor;  // X: what is swapped in its place
};

// The fold for swapped tensor `t`, or nullopt where it is not made so, or X
// is not a value of the same size. `constant`: by TensorId, made from
// initializers alone (a scale must be one, and X must not).
std::optional<SwapFold> swap_fold(const ir::Graph& graph, ir::TensorId t,
                                  const std::vector<bool>& constant);

}  // namespace memplan::passes
