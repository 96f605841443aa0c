#pragma once
// A dropout remade from its kept mask, as ONNX Runtime nodes: the output a
// recompute gives back, bit for bit where the arithmetic allows (see
// docs/model.md), without a fresh random draw.
#include <string>
#include <string_view>
#include <vector>

#include "onnx/onnx_pb.h"
#include "passes/fresh_names.h"

namespace memplan::passes {

// One node of a remake and the suffix its name takes after the name of the
// node it remakes.
struct RemakeNode {
  std::string_view name_suffix;
  onnx::NodeProto node;
};

// `forward` is a copy of a dropout that ir::Node::dropout_mask() knows
// (Dropout, or com.microsoft BitmaskDropout, BiasDropout,
// BitmaskBiasDropout), reading the names its inputs have now; `mask` is the
// name its kept mask has now. The nodes, in order, that remake its output 0:
//   Dropout             DropoutGrad(data, mask, ratio, training_mode)
//   BitmaskDropout      BitmaskDropoutGrad(data, mask, ratio, training_mode)
//   BiasDropout         Add(data, bias) -> DropoutGrad -> Add(residual)
//   BitmaskBiasDropout  Add(data, bias) -> BitmaskDropoutGrad -> Add(residual)
// The grad ops are com.microsoft's; the Add of the residual only when the
// forward has one. ratio and training_mode are passed on as the forward has
// them: when absent, the grad ops default to what the forward ops default
// to (ratio 0.5, training_mode false). The last node writes
// forward.output(0); the values between nodes take fresh names from
// `values`. Attributes (seed) are not copied: nothing is drawn.
std::vector<RemakeNode> dropout_from_mask(const onnx::NodeProto& forward, const std::string& mask,
                                          FreshNames& values);

}  // namespace memplan::passes
