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
  const auto& memory = report["memory"];
  EXPECT_EQ(memory["predicted"]["layout"], "plan");
  EXPECT_EQ(memory["predicted"]["peak_bytes"], doc["predicted"]["peak_bytes"]);
  EXPECT_EQ(memory["predicted"]["layout_arena_bytes"], doc["memory_layout"]["arena_bytes"]);
  EXPECT_EQ(memory["budget_bytes"], doc["budget_bytes"]);
  // Host: measured is the high-water mark of the bytes the run touched.
  EXPECT_EQ(memory["measured"]["from"], "touched_bytes");
  EXPECT_EQ(memory["measured"]["bytes"], memory["measured"]["touched_bytes"]);
  EXPECT_GE(memory["measured"]["allocated_bytes"].get<std::uint64_t>(),
            memory["measured"]["touched_bytes"].get<std::uint64_t>());
  EXPECT_TRUE(memory["measured"]["device_arena_bytes"].is_null());
  EXPECT_EQ(memory["fits_budget"], true);
  EXPECT_TRUE(report["iteration"]["overrun_seconds"].is_object());
  EXPECT_GT(report["iteration"]["measured_seconds"].get<double>(), 0);

  auto text = run_memplan("run " + kMlp + " --plan " + plan + " --time-scale 0.001");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("integrity  0 error(s)"), std::string::npos) << text.out;
}

TEST(RunCli, MeasuredBytesOverTheBudgetExitFive) {
  const std::string dir = test::temp_path("run_cli_over");
  const std::string plan = plan_mlp(dir);
  auto doc = nlohmann::json::parse(std::ifstream(plan));
  // A budget the peak fits but the layout's arena does not: run executes it
  // (validate would refuse it), measures, and fails on the measurement.
  const std::uint64_t arena = doc["memory_layout"]["arena_bytes"];
  doc["budget_bytes"] = arena - 256;
  ASSERT_LE(doc["predicted"]["peak_bytes"].get<std::uint64_t>(), arena - 256);
  std::ofstream(plan) << doc.dump();
  auto r = run_memplan("run " + kMlp + " --plan " + plan + " --time-scale 0.001 --json");
  EXPECT_EQ(r.exit_code, 5) << r.err;
  auto report = nlohmann::json::parse(r.out);
  EXPECT_EQ(report["memory"]["fits_budget"], false);
  EXPECT_GT(report["memory"]["measured"]["bytes"].get<std::uint64_t>(), arena - 256);
  EXPECT_NE(r.err.find("exceed budget_bytes"), std::string::npos) << r.err;
  EXPECT_EQ(report["integrity"]["errors"], 0);
}

TEST(RunCli, UnpoisonedFreesAreReported) {
  const std::string dir = test::temp_path("run_cli_nopoison");
  const std::string plan = plan_mlp(dir);
  auto r =
      run_memplan("run " + kMlp + " --plan " + plan + " --time-scale 0.001 --no-poison --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto report = nlohmann::json::parse(r.out);
  EXPECT_EQ(report["poison_frees"], false);
  EXPECT_EQ(report["integrity"]["errors"], 0);
}

TEST(RunCli, AMisalignedLayoutIsRefusedBeforeItRuns) {
  const std::string dir = test::temp_path("run_cli_misaligned");
  const std::string plan = plan_mlp(dir);
  auto doc = nlohmann::json::parse(std::ifstream(plan));
  doc["memory_layout"]["alignment"] = 4;
  for (auto& a : doc["memory_layout"]["allocations"])
    a["offset"] = a["offset"].get<std::uint64_t>() + 4;
  std::ofstream(plan) << doc.dump();
  auto r = run_memplan("run " + kMlp + " --plan " + plan + " --time-scale 0.001");
  EXPECT_EQ(r.exit_code, 4) << r.err;
  EXPECT_NE(r.err.find("memory_layout.alignment is 4"), std::string::npos) << r.err;
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
