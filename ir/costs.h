#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ir/device.h"
#include "ir/graph.h"

namespace memplan::ir {

// Per-node times for one graph on one device, by NodeId.
struct NodeCosts {
  DeviceSpec device;
  std::vector<double> seconds;  // indexed by NodeId
  std::size_t measured = 0;     // nodes whose time came from a costs/profile file
  std::size_t modelled = 0;     // nodes that fell back to the roofline
  std::string source;           // "memplan.costs F", "ort-profile F", "roofline <device>"

  double total_seconds() const;
};

// A parsed `memplan.costs` file (COSTS_FORMAT.md §1), before it meets a graph.
struct CostsFile {
  std::string path;
  // Device fields the file gives; any given overrides the preset.
  std::optional<std::string> device_name;
  std::optional<std::uint64_t> memory_bytes;
  std::optional<double> h2d_bytes_per_s;
  std::optional<double> d2h_bytes_per_s;
  // Fields memplan adds to the format (a calibrated file gives the whole
  // device, so it does not depend on which --device preset it meets).
  std::optional<double> peak_flops;
  std::optional<double> memory_bytes_per_s;
  std::optional<double> launch_seconds;
  std::map<std::string, double> node_seconds;
  std::map<std::string, std::uint64_t> tensor_bytes;  // size overrides
};

}  // namespace memplan::ir
