// `memplan compare`: --allow restricts every solver as `plan --allow` does;
// each row says how its plan was found and what the model expected.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "support/run_command.h"

namespace memplan::cli {
namespace {

using test::run_memplan;

const std::string kGpt2 =
    std::string(MEMPLAN_FIXTURES) +
    "/gpt2_small.training.onnx --dim batch=8 --dim seq=512 --device a100-40gb";
const std::string kMlpDropout =
    std::string(MEMPLAN_FIXTURES) + "/mlp_dropout.training.onnx --dim batch=64 --device a100-40gb";
const std::string kMlpV100 =
    std::string(MEMPLAN_FIXTURES) + "/mlp.training.onnx --dim batch=64 --device v100-32gb";

// The rows of `memplan compare ARGS --json`, or an empty array (a failure
// added) when it does not exit 0 with `rows` rows.
nlohmann::json compare_rows(const std::string& args, std::size_t rows) {
  auto r = run_memplan("compare " + args + " --json");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  auto doc = nlohmann::json::parse(r.out, nullptr, false);
  if (doc.is_discarded() || doc["rows"].size() != rows) {
    ADD_FAILURE() << r.out;
    return nlohmann::json::array();
  }
  return doc["rows"];
}

nlohmann::json greedy_row(const std::string& allow) {
  const auto rows = compare_rows(kGpt2 + " --solvers greedy --budgets 95% --allow " + allow, 1);
  return rows.empty() ? nlohmann::json{} : rows[0];
}

double plan_iteration(const std::string& allow, const std::string& out) {
  auto r = run_memplan("plan " + kGpt2 + " --solver greedy --budget 95% --outputs plan --allow " +
                       allow + " -q -o " + out);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::ifstream in(out + "/plan.json");
  auto plan = nlohmann::json::parse(in, nullptr, false);
  if (plan.is_discarded()) {
    ADD_FAILURE() << "no plan.json in " << out;
    return -1;
  }
  return plan["predicted"]["iteration_seconds"].get<double>();
}

// Each restriction gives compare the plan `plan --allow` hands out for the
// same budget (no layout replan there), and the two restrictions differ.
TEST(CompareCli, AllowRestrictsTheSolversAsPlanDoes) {
  const std::string dir = ::testing::TempDir() + "memplan_compare_allow_";
  int checked = 0;
  double by_allow[2] = {0, 0};
  const char* allows[2] = {"swap", "recompute"};
  for (int k = 0; k < 2; ++k) {
    nlohmann::json row = greedy_row(allows[k]);
    ASSERT_TRUE(row.contains("fits")) << row.dump();
    ASSERT_TRUE(row["fits"].get<bool>()) << row.dump();
    by_allow[k] = row["iteration_seconds"].get<double>();
    EXPECT_NEAR(by_allow[k], plan_iteration(allows[k], dir + allows[k]), 1e-9) << allows[k];
    ++checked;
  }
  EXPECT_NE(by_allow[0], by_allow[1]);
  EXPECT_EQ(checked, 2);
}

TEST(CompareCli, AllowRefusesWhatIsNeitherSwapNorRecompute) {
  auto r = run_memplan("compare " + kGpt2 + " --solvers greedy --budgets 80% --allow offload");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("--allow: 'offload' is not swap or recompute"), std::string::npos) << r.err;
}

// A plan the solver did not make itself (the evict-all rescue: the
// solver's own plan does not fit) says so in its row, and its model
// objective is the replayed model's for that plan: mlp_dropout at 95 %
// reloads a gradient buffer behind the weight-gradient product, a 23.9 %
// stall the model priced at 0 before.
TEST(CompareCli, ARescuedPlanSaysHowAndIsPricedByTheReplayedModel) {
  const auto rows = compare_rows(kMlpDropout + " --solvers greedy --budgets 95%", 1);
  ASSERT_EQ(rows.size(), 1u);
  const auto& row = rows[0];
  ASSERT_TRUE(row["fits"].get<bool>()) << row.dump();
  EXPECT_NE(row["note"].get<std::string>().find("evict-all"), std::string::npos) << row.dump();
  EXPECT_GT(row["overhead_percent"].get<double>(), 5.0) << row.dump();
  EXPECT_NEAR(row["model_overhead_percent"].get<double>(), row["overhead_percent"].get<double>(),
              0.5)
      << row.dump();
}

// mlp at 60 % of its peak on v100-32gb fits only with its state on the
// host. The ILP calls its model infeasible there, and the scheduler fits its
// choice anyway: the row used to say 0 % in the model (343.91 % simulated);
// at 80 %, where keeping everything settles the ILP, its gap read 100 %.
TEST(CompareCli, TheIlpsRowWithStateOnTheHostCarriesTheModelsObjectiveAndBound) {
  const auto rows = compare_rows(kMlpV100 + " --solvers greedy,ilp --budgets 80%,60%", 4);
  ASSERT_EQ(rows.size(), 4u);
  for (std::size_t i = 0; i < 4; i += 2) {
    const auto& greedy = rows[i];
    const auto& ilp = rows[i + 1];
    ASSERT_EQ(ilp["solver"], "ilp") << ilp.dump();
    ASSERT_TRUE(ilp["fits"].get<bool>()) << ilp.dump();
    EXPECT_NE(ilp["note"].get<std::string>().find("initial_host"), std::string::npos) << ilp.dump();
    EXPECT_GT(ilp["model_overhead_percent"].get<double>(), 100.0) << ilp.dump();
    EXPECT_NEAR(ilp["model_overhead_percent"].get<double>(),
                greedy["model_overhead_percent"].get<double>(), 1e-6)
        << ilp.dump();
    if (ilp["ilp_gap_percent"].is_number()) {
      EXPECT_LT(ilp["ilp_gap_percent"].get<double>(), 1.0) << ilp.dump();
    }
  }
}

// mlp on a100-40gb at 80 % and 55 % fits only with its state on the host.
// The model replays those copies with the swaps (docs/model.md §State on
// the host): within half a point of the simulation (it said 118.57 %
// against 95.28 %, and at 50 % 118.57 % against 166.18 %).
TEST(CompareCli, ThePlansWithStateOnTheHostAreWhatTheModelSays) {
  const std::string mlp =
      std::string(MEMPLAN_FIXTURES) + "/mlp.training.onnx --dim batch=64 --device a100-40gb";
  const auto rows = compare_rows(mlp + " --solvers greedy,ilp --budgets 80%,55%,50%", 6);
  int checked = 0;
  for (const auto& row : rows) {
    ASSERT_TRUE(row["fits"].get<bool>()) << row.dump();
    EXPECT_NE(row["note"].get<std::string>().find("initial_host"), std::string::npos) << row.dump();
    if (row["solver"] == "ilp" && row["budget"] == "50%") continue;  // docs/model.md: a miss
    EXPECT_NEAR(row["model_overhead_percent"].get<double>(), row["overhead_percent"].get<double>(),
                0.5)
        << row.dump();
    ++checked;
  }
  EXPECT_EQ(checked, 5);
}

// A greedy round at a tighter model budget (the first fit mispriced) hands
// out a plan that runs at the real budget: its model objective is the
// model's there. gpt2_small + AdamW on a100-40gb at 40 %: 47.25 % at the
// 95 % model budget, 35.23 % at the real one, 35.77 % simulated.
TEST(CompareCli, APlanFoundAtATighterModelBudgetIsPricedAtTheRealBudget) {
  const std::string fixtures = std::string(MEMPLAN_FIXTURES);
  const auto rows = compare_rows(kGpt2 + " --optimizer " + fixtures +
                                     "/gpt2_small.optimizer.onnx --solvers greedy --budgets 40%",
                                 1);
  ASSERT_EQ(rows.size(), 1U);
  const auto& row = rows[0];
  ASSERT_TRUE(row["fits"].get<bool>()) << row.dump();
  ASSERT_NE(row["note"].get<std::string>().find("model budget"), std::string::npos)
      << "the case no longer tightens the model budget: " << row.dump();
  EXPECT_NEAR(row["model_overhead_percent"].get<double>(), row["overhead_percent"].get<double>(),
              1.0)
      << row.dump();
}

}  // namespace
}  // namespace memplan::cli
