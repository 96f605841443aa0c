#include "ir/costs_file.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <string_view>

#include "ir/device_presets.h"
#include "util/errors.h"

namespace memplan::ir {
namespace {

// A costs file in the temp directory under a unique name, removed on scope exit.
class TempFile {
 public:
  explicit TempFile(std::string_view text) {
    std::random_device rd;
    path_ = std::filesystem::temp_directory_path() /
            ("memplan_costs_test_" + std::to_string(rd()) + std::to_string(rd()) + ".json");
    std::ofstream(path_, std::ios::binary) << text;
  }
  ~TempFile() {
    std::error_code ec;
    std::filesystem::remove(path_, ec);
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  std::string path() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

// The InputError message of reading `text`, or a failure if it is accepted.
std::string error_of(std::string_view text) {
  TempFile f(text);
  try {
    read_costs_file(f.path());
  } catch (const InputError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find(f.path()), std::string::npos) << "message does not name the file: " << msg;
    return msg;
  }
  ADD_FAILURE() << "accepted: " << text;
  return "";
}

// A file with one node entry whose `seconds` is `value` (JSON text).
std::string with_seconds(std::string_view value) {
  return R"({"format": "memplan.costs", "version": 1, "nodes": {"MatMul_3": {"seconds": )" +
         std::string(value) + "}}}";
}

std::string with_bytes(std::string_view value) {
  return R"({"format": "memplan.costs", "version": 1, "nodes": {},
             "tensors": {"x": {"bytes": )" +
         std::string(value) + "}}}";
}

std::string with_device(std::string_view device) {
  return R"({"format": "memplan.costs", "version": 1, "nodes": {}, "device": )" +
         std::string(device) + "}";
}

bool contains(const std::string& text, std::string_view part) {
  return text.find(part) != std::string::npos;
}

TEST(CostsFile, ReadsEveryField) {
  TempFile f(R"({
    "format": "memplan.costs",
    "version": 1,
    "device": {"name": "a100-40gb", "memory_bytes": 42949672960,
               "h2d_bytes_per_s": 2.4e10, "d2h_bytes_per_s": 2.2e10},
    "nodes": {"MatMul_3": {"seconds": 1.25e-4}, "Relu 4.x": {"seconds": 0}},
    "tensors": {"t0": {"bytes": 4194304}, "t1": {"bytes": 4e6}},
    "comment": "unknown keys are ignored"
  })");
  CostsFile c = read_costs_file(f.path());
  EXPECT_EQ(c.path, f.path());
  EXPECT_EQ(c.device_name, "a100-40gb");
  EXPECT_EQ(c.memory_bytes, 42949672960u);
  EXPECT_EQ(c.h2d_bytes_per_s, 2.4e10);
  EXPECT_EQ(c.d2h_bytes_per_s, 2.2e10);
  ASSERT_EQ(c.node_seconds.size(), 2u);
  EXPECT_DOUBLE_EQ(c.node_seconds.at("MatMul_3"), 1.25e-4);
  EXPECT_EQ(c.node_seconds.at("Relu 4.x"), 0.0);
  ASSERT_EQ(c.tensor_bytes.size(), 2u);
  EXPECT_EQ(c.tensor_bytes.at("t0"), 4194304u);
  EXPECT_EQ(c.tensor_bytes.at("t1"), 4000000u);  // an integral float is a whole byte count
}

TEST(CostsFile, DeviceAndTensorsAreOptional) {
  TempFile f(R"({"format": "memplan.costs", "version": 1, "nodes": {}})");
  CostsFile c = read_costs_file(f.path());
  EXPECT_FALSE(c.device_name.has_value());
  EXPECT_FALSE(c.memory_bytes.has_value());
  EXPECT_FALSE(c.h2d_bytes_per_s.has_value());
  EXPECT_FALSE(c.d2h_bytes_per_s.has_value());
  EXPECT_TRUE(c.node_seconds.empty());
  EXPECT_TRUE(c.tensor_bytes.empty());
}

TEST(CostsFile, LargestByteCountIsAccepted) {
  TempFile f(with_bytes("9223372036854775807"));
  EXPECT_EQ(read_costs_file(f.path()).tensor_bytes.at("x"), 9223372036854775807u);
}

TEST(CostsFile, MissingFile) {
  std::string path =
      (std::filesystem::temp_directory_path() / "memplan_no_such_costs.json").string();
  try {
    read_costs_file(path);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_TRUE(contains(e.what(), path)) << e.what();
    EXPECT_TRUE(contains(e.what(), "no such file")) << e.what();
  }
}

TEST(CostsFile, EmptyOrNotJson) {
  EXPECT_TRUE(contains(error_of(""), "empty"));
  EXPECT_TRUE(contains(error_of("  \n"), "empty"));
  EXPECT_TRUE(contains(error_of("{nodes: }"), "not valid JSON"));
  EXPECT_TRUE(contains(error_of(R"({"format": "memplan.costs", "version": 1, "nodes": {})"),
                       "not valid JSON"));
  EXPECT_TRUE(contains(error_of("[1, 2]"), "top level"));
}

TEST(CostsFile, WrongFormatOrVersion) {
  EXPECT_TRUE(contains(error_of(R"({"format": "memplan.plan", "version": 1, "nodes": {}})"),
                       "format: expected \"memplan.costs\""));
  EXPECT_TRUE(contains(error_of(R"({"version": 1, "nodes": {}})"), "format: missing"));
  EXPECT_TRUE(contains(error_of(R"({"format": 1, "version": 1, "nodes": {}})"), "format:"));
  EXPECT_TRUE(contains(error_of(R"({"format": "memplan.costs", "version": 2, "nodes": {}})"),
                       "version: unsupported version 2"));
  EXPECT_TRUE(contains(error_of(R"({"format": "memplan.costs", "version": "1", "nodes": {}})"),
                       "version:"));
  EXPECT_TRUE(
      contains(error_of(R"({"format": "memplan.costs", "nodes": {}})"), "version: missing"));
}

TEST(CostsFile, NodesIsRequiredAndMustBeAnObject) {
  EXPECT_TRUE(contains(error_of(R"({"format": "memplan.costs", "version": 1})"), "nodes: missing"));
  EXPECT_TRUE(contains(error_of(R"({"format": "memplan.costs", "version": 1, "nodes": []})"),
                       "nodes: expected an object"));
  EXPECT_TRUE(contains(
      error_of(R"({"format": "memplan.costs", "version": 1, "nodes": {"MatMul_3": 1e-4}})"),
      "nodes.\"MatMul_3\": expected an object"));
  EXPECT_TRUE(
      contains(error_of(R"({"format": "memplan.costs", "version": 1, "nodes": {"MatMul_3": {}}})"),
               "nodes.\"MatMul_3\".seconds: missing"));
}

TEST(CostsFile, BadSecondsNameTheKey) {
  constexpr std::string_view kKey = "nodes.\"MatMul_3\".seconds";
  std::string negative = error_of(with_seconds("-1"));
  EXPECT_TRUE(contains(negative, std::string(kKey) + ": negative value -1")) << negative;
  for (std::string_view bad :
       {"\"NaN\"", "\"Infinity\"", "1e999", "-1e999", "\"1e-4\"", "true", "null", "[1e-4]", "{}"}) {
    std::string msg = error_of(with_seconds(bad));
    EXPECT_TRUE(contains(msg, kKey)) << bad << " -> " << msg;
  }
}

TEST(CostsFile, BadBytesNameTheKey) {
  constexpr std::string_view kKey = "tensors.\"x\".bytes";
  for (std::string_view bad : {"1.5", "-4", "-4.0", "\"4096\"", "9223372036854775808",
                               "18446744073709551615", "1e300", "1e999", "false"}) {
    std::string msg = error_of(with_bytes(bad));
    EXPECT_TRUE(contains(msg, kKey)) << bad << " -> " << msg;
  }
  EXPECT_TRUE(contains(error_of(with_bytes("1.5")), "whole number"));
  EXPECT_TRUE(contains(error_of(with_bytes("9223372036854775808")), "exceeds 2^63-1"));
}

TEST(CostsFile, BadDeviceFieldsNameTheKey) {
  EXPECT_TRUE(contains(error_of(with_device(R"("a100-40gb")")), "device: expected an object"));
  EXPECT_TRUE(contains(error_of(with_device(R"({"name": 7})")), "device.name:"));
  EXPECT_TRUE(contains(error_of(with_device(R"({"name": ""})")), "device.name:"));
  EXPECT_TRUE(
      contains(error_of(with_device(R"({"memory_bytes": "40GB"})")), "device.memory_bytes:"));
  EXPECT_TRUE(contains(error_of(with_device(R"({"memory_bytes": 0})")), "device.memory_bytes:"));
  EXPECT_TRUE(contains(error_of(with_device(R"({"h2d_bytes_per_s": -2.4e10})")),
                       "device.h2d_bytes_per_s: negative value"));
  EXPECT_TRUE(contains(error_of(with_device(R"({"d2h_bytes_per_s": 0})")),
                       "device.d2h_bytes_per_s: must be positive"));
  EXPECT_TRUE(
      contains(error_of(with_device(R"({"d2h_bytes_per_s": 1e999})")), "device.d2h_bytes_per_s:"));
}

TEST(CostsFile, KeyGivenTwiceIsAnError) {
  std::string msg = error_of(R"({"format": "memplan.costs", "version": 1, "nodes": {
      "MatMul_3": {"seconds": 1e-4}, "MatMul_3": {"seconds": 2e-4}}})");
  EXPECT_TRUE(contains(msg, "nodes.\"MatMul_3\": key given twice")) << msg;
}

TEST(CostsFile, OverridesReplaceOnlyTheGivenFields) {
  const DeviceSpec& base = device_preset("a100-40gb");
  CostsFile f;
  f.path = "run7.costs.json";
  f.memory_bytes = 1000;
  f.h2d_bytes_per_s = 5e9;
  DeviceSpec d = apply_overrides(base, f);
  EXPECT_EQ(d.name, base.name);
  EXPECT_EQ(d.memory_bytes, 1000u);
  EXPECT_EQ(d.h2d_bytes_per_s, 5e9);
  EXPECT_EQ(d.d2h_bytes_per_s, base.d2h_bytes_per_s);
  EXPECT_EQ(d.peak_flops, base.peak_flops);
  EXPECT_TRUE(contains(d.source, "memory_bytes, h2d_bytes_per_s from run7.costs.json")) << d.source;

  f.device_name = "my-a100";
  EXPECT_EQ(apply_overrides(base, f).name, "my-a100");
  EXPECT_EQ(apply_overrides(base, CostsFile{}).source, base.source);  // nothing given
}

}  // namespace
}  // namespace memplan::ir
