#include "ir/reorder.h"

#include <stdexcept>

namespace memplan::ir {

Graph reorder_nodes(const Graph& graph, const std::vector<NodeId>& order) {
  if (order.size() != graph.nodes().size())
    throw std::invalid_argument("reorder: not a permutation");
  std::vector<NodeId> position(order.size(), kNoNode);
  for (NodeId i = 0; i < order.size(); ++i) {
    if (order[i] >= order.size() || position[order[i]] != kNoNode)
      throw std::invalid_argument("reorder: not a permutation");
    position[order[i]] = i;
  }
  Graph out;
  // Sized once: grown one add at a time, the vectors and name indexes were
  // copied and rehashed over and over (synth100k: 200k tensors).
  out.reserve(graph.tensors().size(), graph.nodes().size());
  out.name = graph.name;
  out.dims = graph.dims;
  out.loss = graph.loss;
  for (const Tensor& t : graph.tensors()) {
    TensorId id = out.add_tensor(t.name);
    Tensor& copy = out.mutable_tensors()[id];
    copy = t;
    copy.producer = kNoNode;
    copy.consumers.clear();
  }
  for (NodeId i = 0; i < order.size(); ++i) {
    const Node& n = graph.node(order[i]);
    for (TensorId in : n.inputs) {
      NodeId p = graph.tensor(in).producer;
      if (p != kNoNode && position[p] >= i)
        throw std::invalid_argument("reorder: '" + n.name + "' before its input");
    }
    out.add_node(n);
  }
  return out;
}

}  // namespace memplan::ir
