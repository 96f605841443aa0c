#pragma once
// Nodes that write one of their inputs in place. Such a write makes a host
// copy of that tensor stale: a plan that frees it afterwards must copy it
// out again first (PLAN_FORMAT's `initial_host`: a host copy made after its
// last write).
#include <vector>

#include "ir/node.h"

namespace memplan::ir {

// The inputs `n` writes in place, in slot order: ONNX Runtime's
// InPlaceAccumulatorV2 (com.microsoft) its accumulation buffer, input 0;
// memplan's AdamWStep its parameter and moments, inputs 0, 2 and 3. Empty
// for every other node (InPlaceAccumulator, the first version, returns its
// sum as a new output).
std::vector<TensorId> in_place_writes(const Node& n);

bool writes_in_place(const Node& n, TensorId t);

}  // namespace memplan::ir
