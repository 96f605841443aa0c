#pragma once
// A graph from test::ModelBuilder with roofline costs on the a100 preset,
// and the candidate of a named tensor: what the graph-level solver tests
// (chain holds, shared chain steps) start from.
#include <string>
#include <vector>

#include "ir/device_presets.h"
#include "ir/node_costs.h"
#include "ir/onnx_loader.h"
#include "solvers/problem.h"
#include "support/model_builder.h"

namespace memplan::test {

struct BuiltGraph {
  ir::Graph graph;
  ir::NodeCosts costs;
};

inline BuiltGraph load_built(ModelBuilder& b, const std::string& name) {
  BuiltGraph out;
  out.graph = ir::load_model(b.write(name), {}).graph;
  std::vector<std::string> warnings;
  out.costs =
      ir::make_node_costs(out.graph, ir::device_preset("a100-40gb"), {}, "roofline", warnings);
  return out;
}

// The index of the candidate for tensor `name`, or candidates.size().
inline std::size_t candidate_of(const solvers::Problem& p, const ir::Graph& g,
                                const std::string& name) {
  const ir::TensorId t = *g.find_tensor(name);
  for (std::size_t i = 0; i < p.candidates.size(); ++i)
    if (p.candidates[i].tensor == t) return i;
  return p.candidates.size();
}

}  // namespace memplan::test
