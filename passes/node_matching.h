#pragma once
// Which NodeProto of the model each ir::Graph node came from. The loader
// names unnamed nodes and may reorder an unsorted graph, so the graph's ids
// are not the proto's indices; a node is found by the tensors it makes.
#include <vector>

#include "ir/graph.h"
#include "onnx/onnx_pb.h"

namespace memplan::passes {

// By NodeId: the index of the node in `model.node()`. Throws InputError when
// the graph was not loaded from this model (counts, names or ops differ).
std::vector<int> match_nodes(const onnx::GraphProto& model, const ir::Graph& graph);

}  // namespace memplan::passes
