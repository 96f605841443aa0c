// `--timings` on plan and inspect: every stage named on stderr (the figures
// vary from run to run; only names and well-formed numbers are checked).
#include <gtest/gtest.h>

#include <regex>
#include <string>

#include "support/model_builder.h"
#include "support/run_command.h"

namespace memplan::cli {
namespace {

using test::run_memplan;

const std::string kMlp = std::string(MEMPLAN_FIXTURES) + "/mlp.training.onnx";

// The seconds printed for `stage`, or -1 when its line is missing.
double stage_seconds(const std::string& err, const std::string& stage) {
  std::smatch m;
  const std::regex line("\\n  " + stage + " +([0-9]+\\.[0-9]+) s");
  return std::regex_search(err, m, line) ? std::stod(m[1]) : -1;
}

TEST(TimingsCli, PlanNamesEveryStageAndOutput) {
  const std::string dir = test::temp_path("timings_plan");
  auto r = run_memplan("plan " + kMlp +
                       " --dim batch=4 --budget 100% --solver greedy -q --timings -o " + dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("timings (wall clock):"), std::string::npos) << r.err;
  for (const char* stage :
       {"read_costs", "load_model", "node_costs", "baseline", "plan_search", "plan_search.solver",
        "plan_search.rest", "simulate", "write_plan.json", "write_report.md", "write_trace.json",
        "write_memory.svg", "write_model.memplan.onnx", "total"}) {
    EXPECT_GE(stage_seconds(r.err, stage), 0) << stage << " missing in\n" << r.err;
  }
  EXPECT_LE(stage_seconds(r.err, "plan_search.solver"), stage_seconds(r.err, "plan_search"));
  EXPECT_LE(stage_seconds(r.err, "load_model"), stage_seconds(r.err, "total"));
}

TEST(TimingsCli, PlanNamesOnlyTheOutputsWritten) {
  const std::string dir = test::temp_path("timings_plan_only");
  auto r = run_memplan("plan " + kMlp +
                       " --dim batch=4 --budget 100% --solver greedy -q --outputs plan --timings"
                       " -o " +
                       dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_GE(stage_seconds(r.err, "write_plan.json"), 0) << r.err;
  EXPECT_EQ(r.err.find("write_report.md"), std::string::npos) << r.err;
  EXPECT_LT(stage_seconds(r.err, "simulate"), 0) << r.err;
}

TEST(TimingsCli, PrintedAlsoWhenNoPlanFits) {
  auto r =
      run_memplan("plan " + kMlp + " --dim batch=4 --budget 1KiB --solver greedy -q --timings -o " +
                  test::temp_path("timings_infeasible"));
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_GE(stage_seconds(r.err, "plan_search"), 0) << r.err;
  EXPECT_GE(stage_seconds(r.err, "total"), 0) << r.err;
  EXPECT_EQ(r.err.find("write_plan.json"), std::string::npos) << r.err;
}

TEST(TimingsCli, InspectNamesItsStages) {
  auto r = run_memplan("inspect " + kMlp + " --dim batch=4 --json --timings");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* stage : {"load_model", "node_costs", "analysis", "print", "total"})
    EXPECT_GE(stage_seconds(r.err, stage), 0) << stage << " missing in\n" << r.err;
  EXPECT_EQ(r.out.find("timings"), std::string::npos) << "stdout keeps only the report";
}

TEST(TimingsCli, SilentWithoutTheFlag) {
  auto r = run_memplan("inspect " + kMlp + " --dim batch=4");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.find("timings"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace memplan::cli
