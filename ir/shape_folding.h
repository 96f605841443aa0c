#pragma once
// Constant folding of the small computations exported graphs build shapes
// with. PyTorch writes `x.view(b, s, h, d)` as Shape -> Gather -> Unsqueeze
// -> Concat -> Reshape, and ONNX Runtime turns each Concat into
// ConcatTraining; ONNX 1.12's data propagation follows only part of such
// chains (no Div, Where, Equal, Range, ConcatTraining, float scales, ...).
// With every symbolic dim bound, those values are constants: we evaluate
// them and hand them to inference as initializers.
#include <functional>
#include <string_view>

#include "onnx/onnx_pb.h"

namespace memplan::ir {

using TypeLookup = std::function<const onnx::TypeProto*(std::string_view)>;

// Replaces every node of `graph` (in topological order) whose outputs are
// small constants, given the initializers and the dims `type_of` knows so
// far, by initializers of the same names. Returns how many nodes it folded.
// Meant for the working copy shape inference runs on: the folded nodes stay
// in memplan's own graph.
int fold_small_constants(onnx::GraphProto& graph, const TypeLookup& type_of);

}  // namespace memplan::ir
