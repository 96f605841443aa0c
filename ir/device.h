#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace memplan::ir {

// One accelerator as the planner sees it. `*_source` fields say where each
// figure came from (datasheet, measurement), so `memplan devices` can cite.
struct DeviceSpec {
  std::string name;
  std::uint64_t memory_bytes = 0;
  double h2d_bytes_per_s = 0;     // host -> device copy bandwidth (pinned)
  double d2h_bytes_per_s = 0;     // device -> host
  double peak_flops = 0;          // dense matmul/conv rate the roofline uses
  double memory_bytes_per_s = 0;  // device memory bandwidth
  double launch_seconds = 0;      // floor per kernel
  std::string source;             // where the figures come from
};

}  // namespace memplan::ir
