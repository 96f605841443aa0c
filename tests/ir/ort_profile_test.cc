#include "ir/ort_profile.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <string_view>

#include "util/errors.h"

namespace memplan::ir {
namespace {

class TempFile {
 public:
  explicit TempFile(std::string_view text) {
    std::random_device rd;
    path_ = std::filesystem::temp_directory_path() /
            ("memplan_profile_test_" + std::to_string(rd()) + std::to_string(rd()) + ".json");
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

std::string error_of(std::string_view text) {
  TempFile f(text);
  try {
    read_ort_profile(f.path());
  } catch (const InputError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find(f.path()), std::string::npos) << "message does not name the file: " << msg;
    return msg;
  }
  ADD_FAILURE() << "accepted: " << text;
  return "";
}

bool contains(const std::string& text, std::string_view part) {
  return text.find(part) != std::string::npos;
}

// Shaped like SessionOptions.enable_profiling output: session events, fences
// around each kernel, args values as strings. MatMul_0 runs three times, its
// warm-up (ts 10, 100 us) listed last to check runs are ordered by ts.
constexpr std::string_view kProfile = R"([
  {"cat": "Session", "pid": 1, "tid": 1, "dur": 5000, "ts": 1, "ph": "X",
   "name": "model_loading_uri", "args": {}},
  {"cat": "Session", "pid": 1, "tid": 1, "dur": 9000, "ts": 2, "ph": "X",
   "name": "session_initialization", "args": {}},
  {"cat": "Node", "pid": 1, "tid": 1, "dur": 0, "ts": 19, "ph": "X",
   "name": "MatMul_0_fence_before", "args": {"op_name": "MatMul"}},
  {"cat": "Node", "pid": 1, "tid": 1, "dur": 10, "ts": 20, "ph": "X",
   "name": "MatMul_0_kernel_time",
   "args": {"op_name": "MatMul", "output_size": "4096", "provider": "CPUExecutionProvider",
            "output_type_shape": [{"float": [32, 32]}]}},
  {"cat": "Node", "pid": 1, "tid": 1, "dur": 0, "ts": 31, "ph": "X",
   "name": "MatMul_0_fence_after", "args": {"op_name": "MatMul"}},
  {"cat": "Node", "pid": 1, "tid": 1, "dur": 7, "ts": 35, "ph": "X",
   "name": "Relu_1_kernel_time", "args": {"op_name": "Relu", "output_size": 4096}},
  {"cat": "Node", "pid": 1, "tid": 1, "dur": 20, "ts": 40, "ph": "X",
   "name": "MatMul_0_kernel_time", "args": {"op_name": "MatMul", "output_size": "4096"}},
  {"cat": "Kernel", "pid": 1, "tid": 2, "dur": 3, "ts": 41, "ph": "X",
   "name": "MatMul_0_kernel_time", "args": {}},
  {"cat": "Session", "pid": 1, "tid": 1, "dur": 80, "ts": 50, "ph": "X",
   "name": "SequentialExecutor::Execute", "args": {}},
  {"cat": "Node", "pid": 1, "tid": 1, "dur": 100, "ts": 10, "ph": "X",
   "name": "MatMul_0_kernel_time", "args": {"op_name": "MatMul", "output_size": "4096"}}
])";

TEST(OrtProfile, AveragesRunsAfterDroppingTheWarmUp) {
  TempFile f(kProfile);
  OrtProfile p = read_ort_profile(f.path());
  EXPECT_EQ(p.kernel_events, 4u);  // 3 MatMul_0 + 1 Relu_1; fences, Kernel, Session skipped
  ASSERT_EQ(p.node_seconds.size(), 2u);
  // MatMul_0 runs at ts 10 (100 us, warm-up), 20 (10 us), 40 (20 us): (10 + 20) / 2 = 15 us.
  EXPECT_DOUBLE_EQ(p.node_seconds.at("MatMul_0"), 15e-6);
  // A single run is kept as it is.
  EXPECT_DOUBLE_EQ(p.node_seconds.at("Relu_1"), 7e-6);
  EXPECT_EQ(p.output_bytes.at("MatMul_0"), 4096u);
  EXPECT_EQ(p.output_bytes.at("Relu_1"), 4096u);
}

TEST(OrtProfile, EmptyArrayHasNoEvents) {
  TempFile f("[]");
  OrtProfile p = read_ort_profile(f.path());
  EXPECT_EQ(p.kernel_events, 0u);
  EXPECT_TRUE(p.node_seconds.empty());
}

TEST(OrtProfile, MalformedFilesAreInputErrors) {
  EXPECT_TRUE(contains(error_of(""), "not valid JSON"));
  EXPECT_TRUE(contains(error_of("[{\"cat\": \"Node\""), "not valid JSON"));
  EXPECT_TRUE(contains(error_of(R"({"traceEvents": []})"), "expected a JSON array"));
  EXPECT_TRUE(contains(error_of("[1]"), "event 0: expected an object"));
  EXPECT_TRUE(contains(error_of(R"([{"cat": "Node", "name": "Add_2_kernel_time"}])"),
                       "event 0 (\"Add_2\"): dur: missing"));
  EXPECT_TRUE(contains(error_of(R"([{"cat": "Node", "name": "Add_2_kernel_time", "dur": -3}])"),
                       "dur: negative value -3"));
  EXPECT_TRUE(contains(error_of(R"([{"cat": "Node", "name": "Add_2_kernel_time", "dur": "3"}])"),
                       "dur: expected a number"));
  EXPECT_TRUE(contains(error_of(R"([{"cat": "Node", "name": 5, "dur": 3}])"), "name:"));
  EXPECT_TRUE(contains(error_of(R"([{"cat": "Node", "name": "Add_2_kernel_time", "dur": 3,
                                     "args": {"output_size": "-8"}}])"),
                       "args.output_size"));
}

TEST(OrtProfile, MissingFile) {
  std::string path =
      (std::filesystem::temp_directory_path() / "memplan_no_such_profile.json").string();
  try {
    read_ort_profile(path);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_TRUE(contains(e.what(), path)) << e.what();
  }
}

// The profile committed with the fixtures, written by ONNX Runtime itself.
TEST(OrtProfile, ReadsTheCommittedFixtureProfile) {
  const std::string path = MEMPLAN_FIXTURES "/mlp.ort_profile.json";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " is not generated yet";
  OrtProfile p = read_ort_profile(path);
  EXPECT_GT(p.kernel_events, 0u);
  ASSERT_FALSE(p.node_seconds.empty());
  EXPECT_GE(p.kernel_events, p.node_seconds.size());
  EXPECT_FALSE(p.output_bytes.empty());  // ORT writes args.output_size on every kernel event
  for (const auto& [node, seconds] : p.node_seconds) {
    EXPECT_FALSE(node.empty());
    EXPECT_GT(seconds, 0) << node;
    EXPECT_LT(seconds, 10) << node;  // microseconds were converted, not taken as seconds
  }
}

}  // namespace
}  // namespace memplan::ir
