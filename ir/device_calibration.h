#pragma once
// Turning what scripts/gpu_bandwidth.py measured on a GPU into a device the
// planner uses (issue 19, part 3): `memplan devices --calibrate`.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "ir/device.h"

namespace memplan::ir {

// The figures of one measurement file (gpu_bandwidth.py's JSON output).
struct CopyMeasurement {
  std::string path;
  std::string gpu;                                 // "" when not given
  std::string preset;                              // the preset it was compared with, or ""
  double h2d_bytes_per_s = 0;                      // pinned host->device, alone
  double d2h_bytes_per_s = 0;                      // device->host, alone
  std::optional<double> both_at_once_bytes_per_s;  // each direction, both running
  std::optional<double> launch_seconds;            // per small kernel, dispatch included
};

// Reads and checks the file: InputError naming the file and the key for a
// missing file, bad JSON, a missing copy rate, or a rate that is not a
// positive finite number.
CopyMeasurement read_copy_measurement(const std::string& path);

struct CalibrationOptions {
  // The model treats the two copy directions as independent links. When a
  // machine shares one (both at once is slower than each alone), `concurrent`
  // plans with the both-at-once rate: slower predicted copies, never late.
  bool concurrent = false;
};

// `base` with the measured copy rates (and launch floor, when measured).
DeviceSpec calibrated_device(const DeviceSpec& base, const CopyMeasurement& m,
                             const CalibrationOptions& options = {});

// A memplan.costs file (format 1, COSTS_FORMAT.md §1) that gives the whole
// device and no node times, so `plan --costs FILE` uses the measured figures
// with the roofline; `calibration` says where each figure came from.
nlohmann::json calibrated_costs_json(const DeviceSpec& base, const DeviceSpec& calibrated,
                                     const CopyMeasurement& m, const CalibrationOptions& options);

}  // namespace memplan::ir
