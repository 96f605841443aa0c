#pragma once
// A committed fixture loaded as the CLI loads it: the graph with its dims
// bound, and the roofline costs of a device preset.
#include <cstdint>
#include <map>
#include <string>

#include "ir/costs.h"
#include "ir/graph.h"

namespace memplan::test {

struct FixtureGraph {
  ir::Graph graph;
  ir::NodeCosts costs;
};

// `file` is a name under tests/fixtures/ ("resnet50.training.onnx").
FixtureGraph load_fixture(const std::string& file, const std::map<std::string, std::int64_t>& dims,
                          const std::string& device);

}  // namespace memplan::test
