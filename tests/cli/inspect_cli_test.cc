#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "support/model_builder.h"
#include "support/run_command.h"

namespace memplan {
namespace {

using test::run_memplan;

const std::string kMlp = std::string(MEMPLAN_FIXTURES) + "/mlp.training.onnx";

std::size_t lines(const std::string& s) {
  return static_cast<std::size_t>(std::count(s.begin(), s.end(), '\n'));
}

TEST(InspectCli, PrintsTheBaselinePeak) {
  auto r = run_memplan("inspect " + kMlp + " --dim batch=64");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("baseline peak"), std::string::npos);
  EXPECT_NE(r.out.find("largest activations"), std::string::npos);
  EXPECT_NE(r.out.find("nodes      26"), std::string::npos) << r.out;
}

TEST(InspectCli, JsonReportIsConsistent) {
  auto r = run_memplan("inspect " + kMlp + " --dim batch=64 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["nodes"], 26);
  EXPECT_EQ(j["forward_nodes"].get<int>() + j["backward_nodes"].get<int>(), 26);
  std::uint64_t sum = 0;
  for (const auto& [cls, bytes] : j["baseline_peak"]["by_class"].items())
    sum += bytes.get<std::uint64_t>();
  EXPECT_EQ(sum, j["baseline_peak"]["bytes"].get<std::uint64_t>());
  EXPECT_LE(j["largest_activations"].size(), 10u);
}

TEST(InspectCli, MeasuredTimesFromTheRealProfile) {
  auto r = run_memplan("inspect " + kMlp + " --dim batch=64 --json --profile " + MEMPLAN_FIXTURES +
                       "/mlp.ort_profile.json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["costs"]["measured_nodes"], 26);
  EXPECT_EQ(j["costs"]["modelled_nodes"], 0);
}

TEST(InspectCli, HelpAndUsage) {
  EXPECT_EQ(run_memplan("--help").exit_code, 0);
  EXPECT_EQ(run_memplan("inspect --help").exit_code, 0);
  EXPECT_EQ(run_memplan("").exit_code, 1);
  EXPECT_EQ(run_memplan("inspect").exit_code, 1);
  auto r = run_memplan("inspect " + kMlp + " --dim batch");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("NAME=VALUE"), std::string::npos) << r.err;
  EXPECT_EQ(run_memplan("inspect " + kMlp + " --dim batch=64 --device nosuchgpu").exit_code, 1);
}

// A --dim of 0, a dim given twice and a --time-limit that is no positive
// number are usage errors, each one line naming it; a dim the model does
// not have is a warning, not silence.
TEST(InspectCli, DimsAndTimeLimitsThatMakeNoSense) {
  struct Case {
    std::string args, expect;
  };
  const std::vector<Case> usage = {
      {"inspect " + kMlp + " --dim batch=0", "--dim batch: '0' is not a positive integer"},
      {"inspect " + kMlp + " --dim batch=64 --dim batch=3",
       "--dim batch is given twice (64 and 3)"},
      {"plan " + kMlp + " --dim batch=64 --budget 50% --time-limit 0",
       "--time-limit: '0' is not a positive number of seconds"},
      {"compare " + kMlp + " --dim batch=64 --budgets 50% --time-limit -5",
       "--time-limit: '-5' is not a positive number of seconds"},
      {"plan " + kMlp + " --dim batch=64 --budget 50% --search-limit 0",
       "--search-limit: '0' is not a positive number of seconds"},
  };
  int checked = 0;
  for (const Case& c : usage) {
    auto r = run_memplan(c.args);
    EXPECT_EQ(r.exit_code, 1) << c.args << "\n" << r.err;
    EXPECT_NE(r.err.find(c.expect), std::string::npos) << c.args << "\n" << r.err;
    ++checked;
  }
  auto r = run_memplan("inspect " + kMlp + " --dim batch=64 --dim nosuch=3");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("--dim nosuch: " + kMlp + " has no symbolic dim of that name (ignored)"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(checked, 5);
}

// Bad input: exit 2 and exactly one line on stderr, naming the problem.
struct BadCase {
  const char* label;
  std::string args;
  std::string expect;
};

class InspectBadInput : public ::testing::TestWithParam<BadCase> {};

TEST_P(InspectBadInput, OneLineExitTwo) {
  auto r = run_memplan(GetParam().args);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(lines(r.err), 1u) << r.err;
  EXPECT_NE(r.err.find(GetParam().expect), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty());
}

std::vector<BadCase> bad_cases() {
  std::string cut;
  {
    std::ifstream in(kMlp, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    cut = test::write_temp("cut.onnx", bytes.substr(0, bytes.size() - 100));
  }
  std::string empty = test::write_temp("empty.onnx", "");
  std::string text = test::write_temp("text.onnx", "{\"not\": \"onnx\"}\n");
  std::string bad_costs = test::write_temp(
      "costs.json", R"({"format":"memplan.costs","version":1,"nodes":{"x":{"seconds":-1}}})");
  return {
      {"missing", "inspect /nonexistent.onnx", "no such file"},
      {"empty", "inspect " + empty, "empty file"},
      {"text", "inspect " + text, text},
      {"truncated", "inspect " + cut + " --dim batch=2", cut},
      {"unbound", "inspect " + kMlp, "--dim batch=N"},
      {"costs", "inspect " + kMlp + " --dim batch=2 --costs " + bad_costs, "seconds"},
      // The costs file is read beside the model; its error still comes first,
      // as when it was read before the model.
      {"costs_and_model", "inspect " + text + " --costs " + bad_costs, "seconds"},
      {"costs_and_missing_model", "inspect /nonexistent.onnx --costs " + bad_costs, "seconds"},
  };
}

INSTANTIATE_TEST_SUITE_P(Cases, InspectBadInput, ::testing::ValuesIn(bad_cases()),
                         [](const auto& info) { return std::string(info.param.label); });

}  // namespace
}  // namespace memplan
