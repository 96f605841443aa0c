#include "support/fixture_graph.h"

#include <vector>

#include "ir/device_presets.h"
#include "ir/node_costs.h"
#include "ir/onnx_loader.h"

namespace memplan::test {

FixtureGraph load_fixture(const std::string& file, const std::map<std::string, std::int64_t>& dims,
                          const std::string& device) {
  ir::LoadOptions o;
  o.dims = dims;
  FixtureGraph f;
  f.graph = ir::load_model(std::string(MEMPLAN_FIXTURES) + "/" + file, o).graph;
  std::vector<std::string> warnings;
  f.costs = ir::make_node_costs(f.graph, ir::device_preset(device), {}, "roofline", warnings);
  return f;
}

}  // namespace memplan::test
