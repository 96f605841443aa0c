// `memplan plan --outputs`: only the files named are written, each the same
// bytes as in a run that writes them all.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "support/model_builder.h"
#include "support/run_command.h"

namespace memplan::cli {
namespace {

namespace fs = std::filesystem;
using test::run_memplan;

const char* const kFiles[] = {"plan.json", "report.md", "trace.json", "memory.svg",
                              "model.memplan.onnx"};

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string plan_args(const std::string& dir) {
  return "plan " + std::string(MEMPLAN_FIXTURES) +
         "/mlp.training.onnx --dim batch=4 --budget 100% --solver greedy --reproducible -o " + dir;
}

// The run that writes everything, made once.
const std::string& full_run() {
  static const std::string dir = [] {
    std::string d = test::temp_path("outputs_all");
    const auto r = run_memplan(plan_args(d) + " -q");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return d;
  }();
  return dir;
}

// Runs with `outputs` and checks that exactly `expected` (kFiles indices)
// are written and named, each equal to the full run's.
void expect_only(const std::string& outputs, const std::vector<int>& expected) {
  const std::string dir = test::temp_path("outputs_" + outputs.substr(0, outputs.find(',')));
  const auto r = run_memplan(plan_args(dir) + " --outputs " + outputs);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (int k = 0; k < 5; ++k) {
    const std::string path = dir + "/" + kFiles[k];
    const bool wanted = std::find(expected.begin(), expected.end(), k) != expected.end();
    EXPECT_EQ(fs::exists(path), wanted) << outputs << ": " << kFiles[k];
    EXPECT_EQ(r.out.find(kFiles[k]) != std::string::npos, wanted) << r.out;
    if (wanted) {
      EXPECT_TRUE(slurp(path) == slurp(full_run() + "/" + kFiles[k])) << kFiles[k];
    }
  }
}

TEST(PlanOutputsCli, DefaultWritesEveryFile) {
  for (const char* f : kFiles) EXPECT_TRUE(fs::exists(full_run() + "/" + f)) << f;
}

TEST(PlanOutputsCli, PlanOnlyForACiGate) { expect_only("plan", {0}); }

TEST(PlanOutputsCli, AnySubsetInAnyOrder) {
  expect_only("trace,report", {1, 2});
  expect_only("svg,plan", {0, 3});
  // Without plan.json the rewrite still records the plan's sha256.
  expect_only("model", {4});
}

TEST(PlanOutputsCli, NoRewriteDropsTheModel) {
  const std::string dir = test::temp_path("outputs_norewrite");
  const auto r = run_memplan(plan_args(dir) + " --outputs plan,model --no-rewrite");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::exists(dir + "/plan.json"));
  EXPECT_FALSE(fs::exists(dir + "/model.memplan.onnx"));
}

TEST(PlanOutputsCli, UnknownOrEmptyListIsAUsageError) {
  for (const std::string& bad :
       {std::string("plan,pdf"), std::string(","), std::string("model --no-rewrite")}) {
    const std::string dir = test::temp_path("outputs_bad");
    const auto r = run_memplan(plan_args(dir) + " --outputs " + bad);
    EXPECT_EQ(r.exit_code, 1) << bad;
    EXPECT_NE(r.err.find("--"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(dir + "/plan.json")) << bad;
  }
}

}  // namespace
}  // namespace memplan::cli
