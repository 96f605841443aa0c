// `memplan devices`: the presets of the analytical model with their figures
// and sources, so every number a plan rests on can be traced.
#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/commands.h"
#include "ir/device_calibration.h"
#include "ir/device_presets.h"
#include "util/errors.h"
#include "util/text_file.h"

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

struct CalibrateOptions {
  std::string measurement;
  std::string device;
  std::string output;
  bool concurrent = false;
};

// The preset a measurement is calibrated against: --device, else the one
// gpu_bandwidth.py compared with.
const ir::DeviceSpec& calibration_base(const CalibrateOptions& o, const ir::CopyMeasurement& m) {
  if (!o.device.empty()) return ir::device_preset(o.device);
  if (!m.preset.empty()) return ir::device_preset(m.preset);
  throw UsageError("--calibrate " + o.measurement +
                   ": the file names no preset; say which with --device");
}

void calibrate(const CalibrateOptions& o) {
  const ir::CopyMeasurement m = ir::read_copy_measurement(o.measurement);
  const ir::DeviceSpec& base = calibration_base(o, m);
  const ir::CalibrationOptions options{.concurrent = o.concurrent};
  const ir::DeviceSpec d = ir::calibrated_device(base, m, options);
  const std::string text = ir::calibrated_costs_json(base, d, m, options).dump(2) + "\n";
  std::cerr << row(
      "calibrated %s: H2D %.1f GB/s (preset %.1f), D2H %.1f GB/s (preset %.1f), "
      "launch %.1f us (preset %.1f)\n",
      base.name.c_str(), d.h2d_bytes_per_s / 1e9, base.h2d_bytes_per_s / 1e9,
      d.d2h_bytes_per_s / 1e9, base.d2h_bytes_per_s / 1e9, d.launch_seconds * 1e6,
      base.launch_seconds * 1e6);
  if (o.output.empty()) {
    std::cout << text;
    return;
  }
  util::write_file_atomically(o.output, text);
  std::cerr << "wrote " << o.output << " (use it as: memplan plan MODEL --costs " << o.output
            << ")\n";
}

}  // namespace

void add_devices_command(CLI::App& app) {
  auto as_json = std::make_shared<bool>(false);
  CLI::App* cmd =
      app.add_subcommand("devices", "List the device presets with their figures and sources");
  auto cal = std::make_shared<CalibrateOptions>();
  cmd->add_flag("--json", *as_json, "Print the presets as JSON instead of a table");
  auto* measurement =
      cmd->add_option("--calibrate", cal->measurement,
                      "Turn scripts/gpu_bandwidth.py's JSON into a memplan.costs file whose "
                      "device has the measured copy rates and launch floor");
  cmd->add_option("--device", cal->device,
                  "Preset to calibrate (default: the one the measurement names)")
      ->needs(measurement);
  cmd->add_option("-o,--output", cal->output, "Write the calibrated costs here (default: stdout)")
      ->needs(measurement);
  cmd->add_flag("--concurrent", cal->concurrent,
                "Use the both-directions-at-once rate for both copy directions")
      ->needs(measurement);
  cmd->callback([as_json, cal] {
    if (!cal->measurement.empty())
      calibrate(*cal);
    else if (*as_json)
      print_json(std::cout);
    else
      print_table(std::cout);
  });
}

}  // namespace memplan::cli
