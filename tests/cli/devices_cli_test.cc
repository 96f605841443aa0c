// `memplan devices`: every preset listed, in the table and in JSON.
#include <gtest/gtest.h>

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

}  // namespace
}  // namespace memplan::cli
