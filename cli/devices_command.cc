// `memplan devices`: the presets of the analytical model with their figures
// and sources, so every number a plan rests on can be traced.
#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/commands.h"
#include "ir/device_presets.h"

namespace memplan::cli {
namespace {

void print_json(std::ostream& out) {
  nlohmann::json devices = nlohmann::json::array();
  for (const ir::DeviceSpec& d : ir::device_presets()) {
    devices.push_back({{"name", d.name},
                       {"memory_bytes", d.memory_bytes},
                       {"h2d_bytes_per_s", d.h2d_bytes_per_s},
                       {"d2h_bytes_per_s", d.d2h_bytes_per_s},
                       {"peak_flops", d.peak_flops},
                       {"memory_bytes_per_s", d.memory_bytes_per_s},
                       {"launch_seconds", d.launch_seconds},
                       {"source", d.source}});
  }
  out << nlohmann::json{{"devices", devices}}.dump(2) << "\n";
}

std::string row(const char* fmt, auto... args) {
  char buf[256];
  std::snprintf(buf, sizeof buf, fmt, args...);
  return buf;
}

void print_table(std::ostream& out) {
  constexpr const char* kHead = "%-14s %8s %8s %8s %8s %8s %8s\n";
  out << row(kHead, "name", "memory", "H2D", "D2H", "peak", "mem bw", "launch");
  out << row(kHead, "", "GiB", "GB/s", "GB/s", "TFLOPS", "GB/s", "us");
  for (const ir::DeviceSpec& d : ir::device_presets()) {
    out << row("%-14s %8.1f %8.1f %8.1f %8.1f %8.0f %8.1f\n", d.name.c_str(),
               static_cast<double>(d.memory_bytes) / (1ull << 30), d.h2d_bytes_per_s / 1e9,
               d.d2h_bytes_per_s / 1e9, d.peak_flops / 1e12, d.memory_bytes_per_s / 1e9,
               d.launch_seconds * 1e6);
  }
  out << "\npeak: dense tensor-core rate for float32 inputs (TF32; FP32 on Volta, which has no "
         "TF32).\nH2D/D2H: achievable pinned copy rates, below the PCIe link's theoretical "
         "rate.\n\nsources:\n";
  for (const ir::DeviceSpec& d : ir::device_presets())
    out << "  " << d.name << ": " << d.source << "\n";
}

}  // namespace

void add_devices_command(CLI::App& app) {
  auto as_json = std::make_shared<bool>(false);
  CLI::App* cmd =
      app.add_subcommand("devices", "List the device presets with their figures and sources");
  cmd->add_flag("--json", *as_json, "Print the presets as JSON instead of a table");
  cmd->callback([as_json] {
    if (*as_json)
      print_json(std::cout);
    else
      print_table(std::cout);
  });
}

}  // namespace memplan::cli
