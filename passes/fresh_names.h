#pragma once
// Unique, deterministic names for what the rewrite adds: `<base><suffix>`,
// then `<base><suffix>_2`, `_3`, … past every name already taken. The same
// inputs always give the same names, so rewriting twice gives equal bytes.
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "onnx/onnx_pb.h"

namespace memplan::passes {

class FreshNames {
 public:
  // Takes every value name (inputs, initializers, node outputs, value_info,
  // outputs) of the graph and of its subgraphs, or every node name.
  static FreshNames values_of(const onnx::GraphProto& graph);
  static FreshNames nodes_of(const onnx::GraphProto& graph);

  // The first free name of `<base><suffix>`, `<base><suffix>_2`, …; taken.
  std::string take(std::string_view base, std::string_view suffix);
  void reserve(const std::string& name) { taken_.insert(name); }

 private:
  std::unordered_set<std::string> taken_;
  // Per stem, the number to try next: every lower one is taken (names are
  // never given back), so a stem shared by thousands of anchors costs one
  // probe per name, not one per earlier name (synth100k: 0.25 s).
  std::unordered_map<std::string, int> next_;
};

}  // namespace memplan::passes
