// `devices --calibrate`'s core: reading gpu_bandwidth.py's JSON, the device it
// makes, and the costs file that carries it into `plan --costs`.
#include "ir/device_calibration.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "ir/costs_file.h"
#include "ir/device_presets.h"
#include "util/errors.h"

namespace memplan::ir {
namespace {

constexpr const char* kMeasured = R"({"gpu": "NVIDIA H200", "h2d_bytes_per_s": 5.3e10,
  "d2h_bytes_per_s": 5.1e10, "launch_seconds": 6.2e-6,
  "both_at_once": {"bytes_per_s_each": 3.6e10}, "preset": {"name": "h200-141gb"}})";

std::string written(const std::string& name, const std::string& text) {
  std::string path = ::testing::TempDir() + "memplan_calibration_" + name + ".json";
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

std::string error_of(const std::string& name, const std::string& text) {
  try {
    read_copy_measurement(written(name, text));
  } catch (const InputError& e) {
    return e.what();
  }
  ADD_FAILURE() << "accepted: " << text;
  return "";
}

TEST(DeviceCalibration, ReadsEveryFigure) {
  CopyMeasurement m = read_copy_measurement(written("all", kMeasured));
  EXPECT_EQ(m.gpu, "NVIDIA H200");
  EXPECT_EQ(m.preset, "h200-141gb");
  EXPECT_DOUBLE_EQ(m.h2d_bytes_per_s, 5.3e10);
  EXPECT_DOUBLE_EQ(m.d2h_bytes_per_s, 5.1e10);
  ASSERT_TRUE(m.launch_seconds);
  EXPECT_DOUBLE_EQ(*m.launch_seconds, 6.2e-6);
  ASSERT_TRUE(m.both_at_once_bytes_per_s);
  EXPECT_DOUBLE_EQ(*m.both_at_once_bytes_per_s, 3.6e10);
}

TEST(DeviceCalibration, RefusesMissingOrBadRates) {
  EXPECT_NE(error_of("no_h2d", R"({"d2h_bytes_per_s": 1e10})").find("h2d_bytes_per_s: missing"),
            std::string::npos);
  EXPECT_NE(error_of("zero", R"({"h2d_bytes_per_s": 0, "d2h_bytes_per_s": 1e10})")
                .find("must be positive"),
            std::string::npos);
  EXPECT_NE(error_of("text", R"({"h2d_bytes_per_s": "fast", "d2h_bytes_per_s": 1e10})")
                .find("expected a number"),
            std::string::npos);
  EXPECT_NE(error_of("array", "[1, 2]").find("top level"), std::string::npos);
  EXPECT_NE(error_of("broken", "{\"h2d").find("memplan_calibration_broken"), std::string::npos);
}

TEST(DeviceCalibration, KeepsThePresetButTheMeasuredFigures) {
  const DeviceSpec& base = device_preset("h200-141gb");
  CopyMeasurement m = read_copy_measurement(written("keep", kMeasured));
  DeviceSpec alone = calibrated_device(base, m);
  EXPECT_DOUBLE_EQ(alone.h2d_bytes_per_s, 5.3e10);
  EXPECT_DOUBLE_EQ(alone.d2h_bytes_per_s, 5.1e10);
  EXPECT_DOUBLE_EQ(alone.launch_seconds, 6.2e-6);
  EXPECT_EQ(alone.memory_bytes, base.memory_bytes);
  EXPECT_DOUBLE_EQ(alone.peak_flops, base.peak_flops);
  EXPECT_NE(alone.source.find("measured on NVIDIA H200"), std::string::npos) << alone.source;

  DeviceSpec both = calibrated_device(base, m, {.concurrent = true});
  EXPECT_DOUBLE_EQ(both.h2d_bytes_per_s, 3.6e10);
  EXPECT_DOUBLE_EQ(both.d2h_bytes_per_s, 3.6e10);
}

TEST(DeviceCalibration, CostsFileCarriesTheWholeDeviceToAnyPreset) {
  const DeviceSpec& base = device_preset("h200-141gb");
  CopyMeasurement m = read_copy_measurement(written("carry", kMeasured));
  DeviceSpec d = calibrated_device(base, m);
  std::string path = written("carry_costs", calibrated_costs_json(base, d, m, {}).dump(2));
  // Read back over a different preset: every figure is the calibrated one.
  DeviceSpec read = apply_overrides(device_preset("v100-16gb"), read_costs_file(path));
  EXPECT_EQ(read.name, "h200-141gb");
  EXPECT_EQ(read.memory_bytes, base.memory_bytes);
  EXPECT_DOUBLE_EQ(read.h2d_bytes_per_s, 5.3e10);
  EXPECT_DOUBLE_EQ(read.d2h_bytes_per_s, 5.1e10);
  EXPECT_DOUBLE_EQ(read.peak_flops, base.peak_flops);
  EXPECT_DOUBLE_EQ(read.memory_bytes_per_s, base.memory_bytes_per_s);
  EXPECT_DOUBLE_EQ(read.launch_seconds, 6.2e-6);
}

}  // namespace
}  // namespace memplan::ir
