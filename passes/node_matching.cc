#include "passes/node_matching.h"

#include <string>
#include <unordered_map>

#include "util/errors.h"

namespace memplan::passes {

std::vector<int> match_nodes(const onnx::GraphProto& model, const ir::Graph& graph) {
  const auto& nodes = graph.nodes();
  if (static_cast<std::size_t>(model.node_size()) != nodes.size())
    throw InputError("the model has " + std::to_string(model.node_size()) + " nodes, the graph " +
                     std::to_string(nodes.size()) + ": the graph was not loaded from this model");

  // A tensor is made by one node only, so an output names its node; a node
  // without outputs (legal, if useless) is found by its name.
  std::unordered_map<std::string, int> by_output;
  std::unordered_map<std::string, int> by_name;
  for (int i = 0; i < model.node_size(); ++i) {
    const auto& n = model.node(i);
    bool any = false;
    for (const auto& o : n.output())
      if (!o.empty()) {
        by_output.emplace(o, i);
        any = true;
      }
    if (!any) by_name.emplace(n.name(), i);
  }

  std::vector<int> index(nodes.size(), -1);
  std::vector<bool> used(nodes.size(), false);
  for (std::size_t id = 0; id < nodes.size(); ++id) {
    const ir::Node& node = nodes[id];
    int at = -1;
    if (!node.outputs.empty()) {
      auto it = by_output.find(graph.tensor(node.outputs.front()).name);
      if (it != by_output.end()) at = it->second;
    } else if (auto it = by_name.find(node.name); it != by_name.end()) {
      at = it->second;
    }
    if (at < 0 || used[at] || model.node(at).op_type() != node.op_type)
      throw InputError("node '" + node.name + "' (" + node.op_type +
                       ") is not in the model: the graph was not loaded from this model");
    used[at] = true;
    index[id] = at;
  }
  return index;
}

}  // namespace memplan::passes
