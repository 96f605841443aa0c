// --search-limit on plan and compare: a search past it says so, and still
// writes a plan. The limit is a microsecond, spent before any ILP solve, so
// nothing depends on how fast the machine is.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "support/model_builder.h"
#include "support/run_command.h"

namespace memplan::cli {
namespace {

using test::run_memplan;

const std::string kMlp =
    std::string(MEMPLAN_FIXTURES) + "/mlp.training.onnx --dim batch=64 --device a100-40gb";

TEST(SearchLimitCli, PlanPastItWarnsAndStillWritesAPlan) {
  const std::string dir = test::temp_path("search_limit_plan");
  auto r = run_memplan("plan " + kMlp + " --budget 60% --solver ilp --search-limit 0.000001 " +
                       "--outputs plan -o " + dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("warning: the search ran past its ILP time (--search-limit"),
            std::string::npos)
      << r.err;
  EXPECT_TRUE(std::filesystem::exists(dir + "/plan.json"));
  auto v = run_memplan("validate " + kMlp + " " + dir + "/plan.json");
  EXPECT_EQ(v.exit_code, 0) << v.out << v.err;
}

// --progress: each ILP solve of the search says what it solves and what
// is left of the search limit; none is said once the limit is spent.
TEST(SearchLimitCli, ProgressNamesEachIlpSolve) {
  auto r = run_memplan("plan " + kMlp + " --budget 60% --solver ilp --progress --outputs plan -o " +
                       test::temp_path("search_limit_progress"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("search: ilp at a model budget of "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(" s of the search limit left"), std::string::npos) << r.err;
  auto spent = run_memplan("plan " + kMlp +
                           " --budget 60% --solver ilp --progress --search-limit 0.000001 "
                           "--outputs plan -o " +
                           test::temp_path("search_limit_progress_spent"));
  ASSERT_EQ(spent.exit_code, 0) << spent.err;
  EXPECT_EQ(spent.err.find("search: ilp at a model budget"), std::string::npos) << spent.err;
}

TEST(SearchLimitCli, CompareRowsSayWhichSearchesItCut) {
  auto r = run_memplan("compare " + kMlp +
                       " --budgets 60% --solvers greedy,ilp --search-limit 0.000001 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto doc = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << r.out;
  ASSERT_EQ(doc["rows"].size(), 2u) << r.out;
  EXPECT_EQ(doc["rows"][0]["solver"], "greedy");
  EXPECT_EQ(doc["rows"][0]["ilp_cut_short"], false);
  EXPECT_EQ(doc["rows"][1]["ilp_cut_short"], true);
  EXPECT_EQ(doc["rows"][1]["fits"], true);
  EXPECT_LE(doc["rows"][1]["overhead_percent"].get<double>(),
            doc["rows"][0]["overhead_percent"].get<double>());
}

TEST(SearchLimitCli, CompareTableNamesTheRowsItCut) {
  auto r = run_memplan("compare " + kMlp +
                       " --budgets 60% --solvers greedy,ilp --search-limit 0.000001");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("ran past --search-limit (later ILP solves skipped): ilp at 60%"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("greedy at 60%"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace memplan::cli
