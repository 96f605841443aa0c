// `memplan plan --state-on-host`: at a budget only a plan with the training
// state on the host between iterations meets, auto finds it, writes
// `initial_host` and leaves out the rewritten model (ONNX cannot say it);
// never reports the budget unmet; asking for the model is refused.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "support/model_builder.h"
#include "support/run_command.h"

namespace memplan::cli {
namespace {

namespace fs = std::filesystem;
using test::run_memplan;

// The mlp at batch 64 is mostly parameters, gradient buffers and AdamW's
// moments: 40 % of its baseline peak is below what any plan that keeps
// them on the device at the ends of the iteration reaches (6.13 MiB).
std::string plan_args(const std::string& dir, const std::string& mode) {
  const std::string f = std::string(MEMPLAN_FIXTURES) + "/mlp";
  return "plan " + f + ".training.onnx --optimizer " + f +
         ".optimizer.onnx --dim batch=64 --budget 6.2MiB --solver greedy --state-on-host " + mode +
         " -o " + dir;
}

TEST(StateOnHostCli, AutoKeepsStateOnTheHostWhereNothingElseFitsAndSkipsTheRewrite) {
  const std::string dir = test::temp_path("state_on_host_auto");
  const auto r = run_memplan(plan_args(dir, "auto"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("model.memplan.onnx not written"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir + "/model.memplan.onnx"));
  std::ifstream in(dir + "/plan.json");
  const nlohmann::json plan = nlohmann::json::parse(in);
  ASSERT_TRUE(plan.contains("initial_host"));
  EXPECT_GE(plan["initial_host"].size(), 12u);  // 6 parameters, their buffers
  const auto v = run_memplan("validate " + std::string(MEMPLAN_FIXTURES) +
                             "/mlp.training.onnx --optimizer " + std::string(MEMPLAN_FIXTURES) +
                             "/mlp.optimizer.onnx --dim batch=64 " + dir + "/plan.json");
  EXPECT_EQ(v.exit_code, 0) << v.err;
}

TEST(StateOnHostCli, NeverLeavesTheBudgetUnmet) {
  const auto r = run_memplan(plan_args(test::temp_path("state_on_host_never"), "never"));
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("cannot be met"), std::string::npos) << r.err;
}

TEST(StateOnHostCli, AskingForTheRewrittenModelIsRefusedAndAnUnknownModeIsAUsageError) {
  const std::string dir = test::temp_path("state_on_host_model");
  const auto r = run_memplan(plan_args(dir, "always") + " --outputs plan");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  // The training graph alone (the optimizer's rewrite is refused first).
  const auto m = run_memplan("plan " + std::string(MEMPLAN_FIXTURES) +
                             "/mlp.training.onnx --dim batch=64 --budget 50% --solver greedy "
                             "--outputs plan,model -o " +
                             test::temp_path("state_on_host_model2"));
  EXPECT_NE(m.exit_code, 0);
  EXPECT_NE(m.err.find("initial_host"), std::string::npos) << m.err;
  const auto bad = run_memplan(plan_args(test::temp_path("state_on_host_bad"), "sometimes"));
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.err.find("--state-on-host"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace memplan::cli
