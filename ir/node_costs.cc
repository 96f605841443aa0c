#include "ir/node_costs.h"

#include <cmath>
#include <utility>

#include "ir/roofline.h"
#include "util/errors.h"

namespace memplan::ir {

double NodeCosts::total_seconds() const {
  double sum = 0;
  for (double s : seconds) sum += s;
  return sum;
}

NodeCosts make_node_costs(const Graph& g, const DeviceSpec& device,
                          const std::map<std::string, double>& measured, std::string source,
                          std::vector<std::string>& warnings) {
  NodeCosts costs;
  costs.device = device;
  costs.source = std::move(source);
  costs.seconds.resize(g.nodes().size());
  for (NodeId id = 0; id < g.nodes().size(); ++id) {
    const Node& n = g.node(id);
    if (auto it = measured.find(n.name); it != measured.end()) {
      if (!std::isfinite(it->second) || it->second < 0)
        throw InputError(costs.source + ": node '" + n.name + "': time " +
                         std::to_string(it->second) + " is not a non-negative finite number");
      costs.seconds[id] = it->second;
      ++costs.measured;
    } else {
      costs.seconds[id] = roofline_seconds(g, n, device);
      ++costs.modelled;
    }
  }
  for (const auto& [name, seconds] : measured) {
    if (!g.find_node(name))
      warnings.push_back(costs.source + ": node '" + name + "' is not in the graph (ignored)");
  }
  // When the roofline was chosen as the model (no measurements, a "roofline"
  // source) it is not a fallback, so there is nothing to warn about.
  bool roofline_chosen = measured.empty() && costs.source.starts_with("roofline");
  if (!roofline_chosen && costs.modelled > 0)
    warnings.push_back(std::to_string(costs.modelled) + " of " + std::to_string(g.nodes().size()) +
                       " nodes fell back to the roofline (no measured time)");
  return costs;
}

}  // namespace memplan::ir
