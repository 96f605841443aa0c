#include "passes/swap_fold.h"

#include "ir/small_tensor.h"

namespace memplan::passes {
namespace {

bool one_element(const ir::Tensor& t) { return t.shape_known && ir::element_count(t.shape) == 1; }

// X of `op`, or kNoTensor: a Transpose's one input; the non-constant side of
// a Mul, or the numerator of a Div, whose other side is a constant scalar.
ir::TensorId folded_input(const ir::Graph& g, const ir::Node& op,
                          const std::vector<bool>& constant) {
  if (op.op_type == "Transpose") return op.inputs.size() == 1 ? op.inputs[0] : ir::kNoTensor;
  if ((op.op_type != "Mul" && op.op_type != "Div") || op.inputs.size() != 2) return ir::kNoTensor;
  for (std::size_t side = 0; side < 2; ++side) {
    if (op.op_type == "Div" && side == 1) break;  // a scalar over X is no scale of X
    const ir::TensorId x = op.inputs[side], s = op.inputs[1 - side];
    if (constant[s] && one_element(g.tensor(s)) && !constant[x]) return x;
  }
  return ir::kNoTensor;
}

}  // namespace

std::optional<SwapFold> swap_fold(const ir::Graph& graph, ir::TensorId t,
                                  const std::vector<bool>& constant) {
  const ir::Tensor& tensor = graph.tensor(t);
  if (tensor.producer == ir::kNoNode) return std::nullopt;
  const ir::Node& op = graph.node(tensor.producer);
  if (!op.domain.empty() || op.outputs.size() != 1) return std::nullopt;
  const ir::TensorId x = folded_input(graph, op, constant);
  if (x == ir::kNoTensor || graph.tensor(x).bytes != tensor.bytes ||
      graph.tensor(x).elem_type != tensor.elem_type)
    return std::nullopt;
  return SwapFold{tensor.producer, x};
}

}  // namespace memplan::passes
