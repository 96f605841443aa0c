#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ir/node.h"
#include "ir/tensor.h"

namespace memplan::ir {

// A training graph by ids: tensors and nodes in vectors, the nodes in the
// order the model gives (a topological order), names looked up by map.
class Graph {
 public:
  TensorId add_tensor(std::string name);
  // Returns the id of the tensor with this name, adding it if new.
  TensorId tensor_id(const std::string& name);
  NodeId add_node(Node node);  // wires producers and consumers
  // Room for this many tensors and nodes, so that a loader that knows the
  // counts builds the graph without regrowing it.
  void reserve(std::size_t tensors, std::size_t nodes);

  std::optional<TensorId> find_tensor(std::string_view name) const;
  std::optional<NodeId> find_node(std::string_view name) const;

  const std::vector<Tensor>& tensors() const { return tensors_; }
  const std::vector<Node>& nodes() const { return nodes_; }
  std::vector<Tensor>& mutable_tensors() { return tensors_; }
  // Marks a node as part of the forward (no index depends on the flag).
  void set_forward(NodeId id, bool forward) { nodes_.at(id).is_forward = forward; }
  const Tensor& tensor(TensorId id) const { return tensors_.at(id); }
  const Node& node(NodeId id) const { return nodes_.at(id); }

  // The scalar the backward part differentiates; kNoTensor for a graph
  // without one (an inference graph).
  TensorId loss = kNoTensor;
  std::string name;
  std::map<std::string, std::int64_t> dims;  // bound symbolic dims

  std::vector<TensorId> graph_inputs() const;
  std::vector<TensorId> graph_outputs() const;
  std::uint64_t total_bytes() const;

 private:
  std::vector<Tensor> tensors_;
  std::vector<Node> nodes_;
  // Hashed, looked up by string_view: a 100k-node graph makes ~350k
  // lookups while it loads, and ordered maps spent 0.1 s comparing names.
  struct NameHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  template <class Id>
  using NameIndex = std::unordered_map<std::string, Id, NameHash, std::equal_to<>>;
  NameIndex<TensorId> tensor_index_;
  NameIndex<NodeId> node_index_;
};

}  // namespace memplan::ir
