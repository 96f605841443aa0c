#include "passes/fresh_names.h"

namespace memplan::passes {
namespace {

void collect_values(const onnx::GraphProto& g, std::unordered_set<std::string>& out) {
  for (const auto& v : g.input()) out.insert(v.name());
  for (const auto& v : g.output()) out.insert(v.name());
  for (const auto& v : g.value_info()) out.insert(v.name());
  for (const auto& t : g.initializer()) out.insert(t.name());
  for (const auto& n : g.node()) {
    for (const auto& o : n.output()) out.insert(o);
    for (const auto& a : n.attribute()) {
      if (a.has_g()) collect_values(a.g(), out);
      for (const auto& sub : a.graphs()) collect_values(sub, out);
    }
  }
}

void collect_nodes(const onnx::GraphProto& g, std::unordered_set<std::string>& out) {
  for (const auto& n : g.node()) {
    out.insert(n.name());
    for (const auto& a : n.attribute()) {
      if (a.has_g()) collect_nodes(a.g(), out);
      for (const auto& sub : a.graphs()) collect_nodes(sub, out);
    }
  }
}

}  // namespace

FreshNames FreshNames::values_of(const onnx::GraphProto& graph) {
  FreshNames names;
  collect_values(graph, names.taken_);
  return names;
}

FreshNames FreshNames::nodes_of(const onnx::GraphProto& graph) {
  FreshNames names;
  collect_nodes(graph, names.taken_);
  return names;
}

std::string FreshNames::take(std::string_view base, std::string_view suffix) {
  std::string stem = std::string(base) + std::string(suffix);
  // Numbered from 2, as ONNX Runtime numbers its own `_recompute` clones.
  auto [next, first] = next_.try_emplace(stem, 2);
  std::string name = first ? stem : stem + "_" + std::to_string(next->second++);
  while (taken_.count(name) != 0) name = stem + "_" + std::to_string(next->second++);
  taken_.insert(name);
  return name;
}

}  // namespace memplan::passes
