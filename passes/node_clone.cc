#include "passes/node_clone.h"

#include <unordered_set>

namespace memplan::passes {
namespace {

using Rename = std::function<std::string(const std::string&)>;

// Names a subgraph defines shadow nothing (ONNX names are unique across
// scopes), but they are its own, so only the other names it reads are outer
// reads. `local` holds the names of the enclosing subgraphs too.
void rename_outer_reads(onnx::GraphProto& g, std::unordered_set<std::string> local,
                        const Rename& rename) {
  for (const auto& v : g.input()) local.insert(v.name());
  for (const auto& t : g.initializer()) local.insert(t.name());
  for (const auto& n : g.node())
    for (const auto& o : n.output()) local.insert(o);
  auto outer = [&](std::string* name) {
    if (!name->empty() && local.count(*name) == 0) *name = rename(*name);
  };
  for (auto& n : *g.mutable_node()) {
    for (auto& in : *n.mutable_input()) outer(&in);
    for (auto& a : *n.mutable_attribute()) {
      if (a.has_g()) rename_outer_reads(*a.mutable_g(), local, rename);
      for (auto& sub : *a.mutable_graphs()) rename_outer_reads(sub, local, rename);
    }
  }
  for (auto& v : *g.mutable_output()) outer(v.mutable_name());
}

}  // namespace

onnx::NodeProto clone_reading(const onnx::NodeProto& node, const Rename& rename) {
  onnx::NodeProto copy = node;
  for (auto& in : *copy.mutable_input())
    if (!in.empty()) in = rename(in);
  for (auto& a : *copy.mutable_attribute()) {
    if (a.has_g()) rename_outer_reads(*a.mutable_g(), {}, rename);
    for (auto& sub : *a.mutable_graphs()) rename_outer_reads(sub, {}, rename);
  }
  return copy;
}

}  // namespace memplan::passes
