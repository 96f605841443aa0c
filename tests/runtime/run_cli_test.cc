// `memplan run` as a user calls it: plan a fixture, run the plan on the host
// backend, read the report; a GPU that is not there is one line and exit 2.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "runtime-stub/backends.h"
#include "runtime-stub/cuda_backend.h"
#include "support/model_builder.h"
#include "support/run_command.h"

namespace memplan::runtime {
namespace {

using test::run_memplan;

const std::string kMlp = std::string(MEMPLAN_FIXTURES) + "/mlp.training.onnx";

std::string plan_mlp(const std::string& dir) {
  // mlp is mostly parameters: 95 % of its baseline peak is about what it can reach.
  auto r = run_memplan("plan " + kMlp + " --dim batch=2 --budget 95% --solver greedy -q -o " + dir);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return dir + "/plan.json";
}

TEST(RunCli, RunsAPlanAndReportsMeasuredNextToPredicted) {
  const std::string dir = test::temp_path("run_cli");
  const std::string plan = plan_mlp(dir);
  auto doc = nlohmann::json::parse(std::ifstream(plan));
  ASSERT_TRUE(doc.contains("memory_layout"));  // `memplan plan` writes the layout
  EXPECT_LE(doc["memory_layout"]["fragmentation"].get<double>(), 1.05);

  auto r = run_memplan("run " + kMlp + " --plan " + plan + " --time-scale 0.001 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto report = nlohmann::json::parse(r.out);
  EXPECT_EQ(report["backend"], "host");
  EXPECT_EQ(report["integrity"]["errors"], 0);
  EXPECT_EQ(report["arena"]["layout"], "plan");
  EXPECT_EQ(report["arena"]["predicted_peak_bytes"], doc["predicted"]["peak_bytes"]);
  EXPECT_GT(report["iteration"]["measured_seconds"].get<double>(), 0);

  auto text = run_memplan("run " + kMlp + " --plan " + plan + " --time-scale 0.001");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("integrity  0 error(s)"), std::string::npos) << text.out;
}

TEST(RunCli, ABrokenPlanIsRejected) {
  const std::string dir = test::temp_path("run_cli_broken");
  const std::string plan = plan_mlp(dir);
  auto doc = nlohmann::json::parse(std::ifstream(plan));
  // Without its first compute step a node never runs: `run` validates the
  // plan first and refuses it with exit 4.
  auto& schedule = doc["schedule"];
  schedule.erase(schedule.begin());
  std::ofstream(plan) << doc.dump();
  auto r = run_memplan("run " + kMlp + " --plan " + plan + " --time-scale 0.001");
  EXPECT_EQ(r.exit_code, 4) << r.err;
}

TEST(RunCli, CudaWithoutAGpuIsOneLineAndExit2) {
  if (cuda_backend_built() && cuda_unavailable_reason().empty()) GTEST_SKIP() << "a GPU is present";
  const std::string dir = test::temp_path("run_cli_cuda");
  const std::string plan = plan_mlp(dir);
  auto r = run_memplan("run " + kMlp + " --plan " + plan + " --backend cuda");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find("cuda"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace memplan::runtime
