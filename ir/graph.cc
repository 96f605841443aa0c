#include "ir/graph.h"

#include <algorithm>

#include "util/errors.h"

namespace memplan::ir {

std::string_view to_string(TensorClass c) {
  switch (c) {
    case TensorClass::kParameter:
      return "parameter";
    case TensorClass::kInput:
      return "input";
    case TensorClass::kActivation:
      return "activation";
    case TensorClass::kGradient:
      return "gradient";
    case TensorClass::kOptimizerState:
      return "optimizer_state";
    case TensorClass::kTemporary:
      return "temporary";
    case TensorClass::kOutput:
      return "output";
  }
  return "temporary";
}

std::int64_t Attributes::int_or(std::string_view key, std::int64_t fallback) const {
  auto it = ints.find(key);
  return it == ints.end() || it->second.empty() ? fallback : it->second.front();
}

bool Node::is_random() const {
  if (domain.empty() || domain == "ai.onnx") {
    if (op_type == "RandomNormal" || op_type == "RandomUniform" || op_type == "RandomNormalLike" ||
        op_type == "RandomUniformLike" || op_type == "Bernoulli" || op_type == "Multinomial") {
      return attrs.ints.find("seed") == attrs.ints.end() &&
             attrs.floats.find("seed") == attrs.floats.end();
    }
    // Dropout draws a mask in training mode; its seed attribute makes it
    // repeatable only within one session, so it is treated as random.
    if (op_type == "Dropout") return true;
  }
  if (domain == "com.microsoft") {
    return op_type == "BitmaskDropout" || op_type == "BiasDropout" ||
           op_type == "BitmaskBiasDropout" || op_type == "BiasSoftmaxDropout";
  }
  return false;
}

TensorId Node::dropout_mask() const {
  // Output 1 is the mask in every form; empty optional outputs are left
  // out of `outputs`, so a second output is the mask.
  const bool onnx_dropout = (domain.empty() || domain == "ai.onnx") && op_type == "Dropout";
  const bool fused_dropout =
      domain == "com.microsoft" &&
      (op_type == "BitmaskDropout" || op_type == "BiasDropout" || op_type == "BitmaskBiasDropout");
  return (onnx_dropout || fused_dropout) && outputs.size() == 2 ? outputs[1] : kNoTensor;
}

TensorId Graph::add_tensor(std::string name) {
  if (tensor_index_.count(name) != 0) throw InputError("tensor '" + name + "' declared twice");
  auto id = static_cast<TensorId>(tensors_.size());
  tensor_index_.emplace(name, id);
  Tensor t;
  t.name = std::move(name);
  tensors_.push_back(std::move(t));
  return id;
}

void Graph::reserve(std::size_t tensors, std::size_t nodes) {
  tensors_.reserve(tensors);
  tensor_index_.reserve(tensors);
  nodes_.reserve(nodes);
  node_index_.reserve(nodes);
}

TensorId Graph::tensor_id(const std::string& name) {
  if (auto it = tensor_index_.find(name); it != tensor_index_.end()) return it->second;
  return add_tensor(name);
}

NodeId Graph::add_node(Node node) {
  auto id = static_cast<NodeId>(nodes_.size());
  if (!node_index_.emplace(node.name, id).second)
    throw InputError("two nodes are named '" + node.name + "'");
  for (TensorId out : node.outputs) {
    Tensor& t = tensors_.at(out);
    if (t.producer != kNoNode)
      throw InputError("tensor '" + t.name + "' is made by two nodes: '" + nodes_[t.producer].name +
                       "' and '" + node.name + "'");
    if (t.is_graph_input || t.is_initializer)
      throw InputError("node '" + node.name + "' writes graph input '" + t.name + "'");
    t.producer = id;
  }
  for (TensorId in : node.inputs) {
    auto& c = tensors_.at(in).consumers;
    if (c.empty() || c.back() != id) c.push_back(id);
  }
  nodes_.push_back(std::move(node));
  return id;
}

std::optional<TensorId> Graph::find_tensor(std::string_view name) const {
  auto it = tensor_index_.find(name);
  if (it == tensor_index_.end()) return std::nullopt;
  return it->second;
}

std::optional<NodeId> Graph::find_node(std::string_view name) const {
  auto it = node_index_.find(name);
  if (it == node_index_.end()) return std::nullopt;
  return it->second;
}

std::vector<TensorId> Graph::graph_inputs() const {
  std::vector<TensorId> ids;
  for (TensorId i = 0; i < tensors_.size(); ++i)
    if (tensors_[i].initially_resident()) ids.push_back(i);
  return ids;
}

std::vector<TensorId> Graph::graph_outputs() const {
  std::vector<TensorId> ids;
  for (TensorId i = 0; i < tensors_.size(); ++i)
    if (tensors_[i].is_graph_output) ids.push_back(i);
  return ids;
}

std::uint64_t Graph::total_bytes() const {
  std::uint64_t sum = 0;
  for (const auto& t : tensors_) sum += t.bytes;
  return sum;
}

}  // namespace memplan::ir
