#pragma once
// Joining measured times with the roofline into one time per node.
#include <map>
#include <string>
#include <vector>

#include "ir/costs.h"
#include "ir/device.h"
#include "ir/graph.h"

namespace memplan::ir {

// Times by NodeId: `measured[node name]` where given, the roofline on `device`
// otherwise. Appends to `warnings` one line per measured name that is not a
// node of `g` (COSTS_FORMAT.md: reported, not silently used), and one line
// "N of M nodes fell back to the roofline" when some node lacks a measured
// time, unless the roofline is the chosen model (`measured` empty and
// `source` starting with "roofline"). `source` is stored as NodeCosts::source
// and names the file in errors: a negative or non-finite measured time throws
// InputError.
NodeCosts make_node_costs(const Graph& g, const DeviceSpec& device,
                          const std::map<std::string, double>& measured, std::string source,
                          std::vector<std::string>& warnings);

}  // namespace memplan::ir
