// `memplan devices`: every preset listed, in the table and in JSON.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "support/run_command.h"

namespace memplan::cli {
namespace {

using test::run_memplan;

TEST(DevicesCli, TableListsTheSixteenGigabyteV100) {
  auto r = run_memplan("devices");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto row = r.out.find("\nv100-16gb ");
  ASSERT_NE(row, std::string::npos) << r.out;
  EXPECT_NE(r.out.find("16.0", row), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("v100-16gb: NVIDIA Tesla V100 datasheet"), std::string::npos) << r.out;
}

TEST(DevicesCli, JsonHasEveryPresetOnce) {
  auto r = run_memplan("devices --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto doc = nlohmann::json::parse(r.out);
  int v16 = 0;
  for (const auto& d : doc["devices"]) {
    if (d["name"] != "v100-16gb") continue;
    ++v16;
    EXPECT_EQ(d["memory_bytes"].get<std::uint64_t>(), 16ull << 30);
    EXPECT_DOUBLE_EQ(d["peak_flops"].get<double>(), 15.7e12);
  }
  EXPECT_EQ(v16, 1);
  EXPECT_GE(doc["devices"].size(), 7u);
}

std::string temp_path(const std::string& name) {
  return ::testing::TempDir() + "memplan_devices_cli_" + name;
}

// The measured rates reach plan.json through the calibrated costs file.
TEST(DevicesCli, CalibratedCostsReachThePlan) {
  const std::string measured = temp_path("bw.json"), costs = temp_path("costs.json");
  std::ofstream(measured) << R"({"h2d_bytes_per_s": 5.3e10, "d2h_bytes_per_s": 5.1e10,
    "launch_seconds": 6e-6, "preset": {"name": "h200-141gb"}})";
  std::filesystem::remove(costs);
  auto r = run_memplan("devices --calibrate " + measured + " -o " + costs);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("H2D 53.0 GB/s (preset 48.0)"), std::string::npos) << r.err;

  const std::string out = temp_path("plan");
  r = run_memplan("plan " + std::string(MEMPLAN_SOURCE_DIR) +
                  "/examples/mlp.training.onnx --dim batch=64 --budget 95% --outputs plan "
                  "--costs " +
                  costs + " -o " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::ifstream in(out + "/plan.json");
  auto device = nlohmann::json::parse(in)["device"];
  EXPECT_EQ(device["name"], "h200-141gb");
  EXPECT_DOUBLE_EQ(device["h2d_bytes_per_s"].get<double>(), 5.3e10);
  EXPECT_DOUBLE_EQ(device["d2h_bytes_per_s"].get<double>(), 5.1e10);
}

TEST(DevicesCli, CalibrationRefusesAMissingRateAndWritesNothing) {
  const std::string measured = temp_path("bad_bw.json"), costs = temp_path("bad_costs.json");
  std::ofstream(measured) << R"({"d2h_bytes_per_s": 5.1e10})";
  std::filesystem::remove(costs);
  auto r = run_memplan("devices --calibrate " + measured + " --device h200-141gb -o " + costs);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("h2d_bytes_per_s: missing"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(costs));
}

TEST(DevicesCli, CalibrationWithoutAPresetAsksForOne) {
  const std::string measured = temp_path("nameless_bw.json");
  std::ofstream(measured) << R"({"h2d_bytes_per_s": 5.3e10, "d2h_bytes_per_s": 5.1e10})";
  auto r = run_memplan("devices --calibrate " + measured);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("--device"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace memplan::cli
