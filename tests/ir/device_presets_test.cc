#include "ir/device_presets.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "util/errors.h"

namespace memplan::ir {
namespace {

TEST(DevicePresets, CoversTheGpusTheFormatNames) {
  for (const char* name : {"v100-16gb", "v100-32gb", "a100-40gb", "a100-80gb", "h100-80gb",
                           "h200-141gb", "rtx4090-24gb"}) {
    EXPECT_EQ(device_preset(name).name, name);
  }
}

TEST(DevicePresets, EveryFigureIsPositiveAndSourced) {
  std::set<std::string> names;
  for (const DeviceSpec& d : device_presets()) {
    SCOPED_TRACE(d.name);
    EXPECT_TRUE(names.insert(d.name).second) << "duplicate preset";
    EXPECT_GT(d.memory_bytes, 0u);
    EXPECT_GT(d.h2d_bytes_per_s, 0);
    EXPECT_GT(d.d2h_bytes_per_s, 0);
    EXPECT_GT(d.peak_flops, 0);
    EXPECT_GT(d.memory_bytes_per_s, 0);
    EXPECT_GT(d.launch_seconds, 0);
    EXPECT_LT(d.launch_seconds, 1e-4);
    EXPECT_TRUE(d.source.find("datasheet") != std::string::npos ||
                d.source.find("whitepaper") != std::string::npos)
        << d.source;
    EXPECT_NE(d.source.find("PCIe"), std::string::npos);
  }
}

TEST(DevicePresets, FiguresMatchTheDatasheets) {
  const DeviceSpec& a100 = device_preset("a100-40gb");
  EXPECT_EQ(a100.memory_bytes, 42949672960u);  // COSTS_FORMAT.md's example
  EXPECT_DOUBLE_EQ(a100.memory_bytes_per_s, 1555e9);
  EXPECT_DOUBLE_EQ(a100.peak_flops, 156e12);
  EXPECT_DOUBLE_EQ(device_preset("v100-32gb").h2d_bytes_per_s, 12e9);  // PCIe 3
  EXPECT_DOUBLE_EQ(device_preset("a100-80gb").h2d_bytes_per_s, 24e9);  // PCIe 4
  EXPECT_DOUBLE_EQ(device_preset("h100-80gb").h2d_bytes_per_s, 48e9);  // PCIe 5
  EXPECT_DOUBLE_EQ(device_preset("h200-141gb").d2h_bytes_per_s, 48e9);
  EXPECT_EQ(device_preset("h200-141gb").memory_bytes, 141ull << 30);
  // Newer parts are never slower on the figures the roofline uses.
  EXPECT_GT(device_preset("h200-141gb").memory_bytes_per_s,
            device_preset("h100-80gb").memory_bytes_per_s);
  EXPECT_GT(device_preset("a100-80gb").memory_bytes_per_s, a100.memory_bytes_per_s);
}

TEST(DevicePresets, V100SixteenIsTheThirtyTwoWithHalfTheMemory) {
  const DeviceSpec& v16 = device_preset("v100-16gb");
  const DeviceSpec& v32 = device_preset("v100-32gb");
  EXPECT_EQ(v16.memory_bytes, 16ull << 30);
  EXPECT_EQ(v16.memory_bytes * 2, v32.memory_bytes);
  EXPECT_DOUBLE_EQ(v16.peak_flops, v32.peak_flops);
  EXPECT_DOUBLE_EQ(v16.memory_bytes_per_s, v32.memory_bytes_per_s);
  EXPECT_DOUBLE_EQ(v16.h2d_bytes_per_s, v32.h2d_bytes_per_s);
  EXPECT_DOUBLE_EQ(v16.d2h_bytes_per_s, v32.d2h_bytes_per_s);
  EXPECT_DOUBLE_EQ(v16.launch_seconds, v32.launch_seconds);
  EXPECT_NE(v16.source.find("16GB"), std::string::npos) << v16.source;
}

TEST(DevicePresets, LookupIgnoresCase) {
  EXPECT_EQ(device_preset("A100-40GB").name, "a100-40gb");
  EXPECT_EQ(&device_preset("Rtx4090-24Gb"), &device_preset("rtx4090-24gb"));
}

TEST(DevicePresets, UnknownNameListsTheKnownOnes) {
  try {
    device_preset("tpu-v4");
    FAIL() << "expected UsageError";
  } catch (const UsageError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("unknown device 'tpu-v4'"), std::string::npos) << msg;
    for (const DeviceSpec& d : device_presets())
      EXPECT_NE(msg.find(d.name), std::string::npos) << msg;
  }
  EXPECT_THROW(device_preset(""), UsageError);
  EXPECT_THROW(device_preset("a100"), UsageError);  // no prefix matching
}

}  // namespace
}  // namespace memplan::ir
