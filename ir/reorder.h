#pragma once
#include <vector>

#include "ir/graph.h"

namespace memplan::ir {

// The same graph with its nodes in another (topological) order: tensor ids,
// names, sizes and classes unchanged; node i of the result is node
// order[i] of `graph`. Throws std::invalid_argument when `order` is not a
// permutation or breaks a dependency.
Graph reorder_nodes(const Graph& graph, const std::vector<NodeId>& order);

}  // namespace memplan::ir
