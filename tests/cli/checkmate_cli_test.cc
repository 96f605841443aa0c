// `memplan plan --solver checkmate`: an exact recompute-only plan of a
// small graph that validates, and one clear line where the graph is too
// large for its MILP.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "support/model_builder.h"
#include "support/run_command.h"

namespace memplan::cli {
namespace {

using test::run_memplan;

// x0 -> Sigmoid x6 -> loss, with a backward reading the states last first.
std::string six_step_chain() {
  test::ModelBuilder b;
  b.input("x0", {std::int64_t{4096}});
  for (int i = 1; i <= 6; ++i)
    b.node("Sigmoid", {"x" + std::to_string(i - 1)}, {"x" + std::to_string(i)},
           "f" + std::to_string(i));
  test::set_int_attr(b.node("ReduceSum", {"x6"}, {"loss"}, "loss_node"), "keepdims", 0);
  b.node("Neg", {"x6"}, {"g6"}, "b_start");
  for (int i = 6; i >= 1; --i)
    b.node("Mul", {"g" + std::to_string(i), "x" + std::to_string(i - 1)},
           {"g" + std::to_string(i - 1)}, "b" + std::to_string(i));
  b.output("loss").output("g0");
  return b.write("checkmate_chain");
}

TEST(CheckmateCli, PlansASmallChainExactlyAndTheValidatorAgrees) {
  const std::string model = six_step_chain();
  const std::string out = ::testing::TempDir() + "memplan_checkmate_chain";
  // x0 and three 16 KiB states: below what the heuristic reaches.
  const std::string budget = std::to_string(4 * 16384 + 1024);
  auto greedy = run_memplan("plan " + model + " --solver recompute-greedy --budget " + budget +
                            " -q -o " + out + "_greedy");
  EXPECT_EQ(greedy.exit_code, 3) << greedy.err;
  auto r = run_memplan("plan " + model + " --solver checkmate --budget " + budget +
                       " --outputs plan -q -o " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::ifstream in(out + "/plan.json");
  const auto plan = nlohmann::json::parse(in, nullptr, false);
  ASSERT_FALSE(plan.is_discarded());
  EXPECT_EQ(plan["solver"]["name"], "checkmate");
  EXPECT_EQ(plan["solver"]["status"], "optimal");
  int recomputes = 0;
  for (const auto& step : plan["schedule"]) recomputes += step["op"] == "recompute";
  EXPECT_GT(recomputes, 0);
  auto v = run_memplan("validate " + model + " " + out + "/plan.json");
  EXPECT_EQ(v.exit_code, 0) << v.out << v.err;
}

// compare lists checkmate among its default solvers where the graph is
// small enough for it, and not otherwise.
TEST(CheckmateCli, CompareRunsItByDefaultOnASmallGraphOnly) {
  auto small = run_memplan("compare " + six_step_chain() + " --budgets 90% --json");
  ASSERT_EQ(small.exit_code, 0) << small.err;
  auto doc = nlohmann::json::parse(small.out, nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << small.out;
  int rows = 0;
  for (const auto& row : doc["rows"])
    if (row["solver"] == "checkmate") {
      ++rows;
      EXPECT_TRUE(row["fits"].get<bool>()) << row.dump();
    }
  EXPECT_EQ(rows, 1);
  auto large = run_memplan("compare " + std::string(MEMPLAN_FIXTURES) +
                           "/torch/gru_lm.opset15.training.onnx --dim batch=4 --dim seq=16 "
                           "--budgets 90% --time-limit 2 --json");  // 97 nodes
  ASSERT_EQ(large.exit_code, 0) << large.err;
  EXPECT_NE(large.out.find("\"greedy\""), std::string::npos);
  EXPECT_EQ(large.out.find("\"checkmate\""), std::string::npos);
}

TEST(CheckmateCli, ALargeGraphGetsNoPlanAndOneLineSayingWhy) {
  auto r = run_memplan("plan " + std::string(MEMPLAN_FIXTURES) +
                       "/gpt2_small.training.onnx --dim batch=8 --dim seq=512 --solver checkmate "
                       "--budget 90% -q -o " +
                       ::testing::TempDir() + "memplan_checkmate_large");
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("more than the 64 its MILP is built for"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

}  // namespace
}  // namespace memplan::cli
