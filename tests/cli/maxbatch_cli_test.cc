// `memplan maxbatch`: the largest batch within the overhead limit, the
// largest without a plan, the throughput peaks (simulated and ATP's model)
// and the curve of every batch tried, in JSON and as text.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "support/run_command.h"

namespace memplan::cli {
namespace {

using test::run_memplan;

// GPT-2 small at seq 512 on a 16 GiB V100: batch 18 fits without a plan,
// larger ones need one; 1 % overhead stops the search below batch 32.
const std::string kArgs = "maxbatch " + std::string(MEMPLAN_FIXTURES) +
                          "/gpt2_small.training.onnx --dim seq=512 --device v100-16gb "
                          "--solver greedy --max-overhead 1% --max-batch 32";

const nlohmann::json& answer() {
  static const nlohmann::json doc = [] {
    auto r = run_memplan(kArgs + " --json");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return nlohmann::json::parse(r.out);
  }();
  return doc;
}

std::map<std::int64_t, nlohmann::json> rows_by_batch() {
  std::map<std::int64_t, nlohmann::json> rows;
  for (const auto& r : answer()["table"]) rows[r["batch"].get<std::int64_t>()] = r;
  return rows;
}

TEST(MaxBatchCli, LargestBatchesAreExactBoundaries) {
  const auto rows = rows_by_batch();
  ASSERT_EQ(rows.size(), answer()["table"].size()) << "a batch listed twice";
  const auto largest = answer()["largest_batch"].get<std::int64_t>();
  const auto no_plan = answer()["largest_batch_without_plan"].get<std::int64_t>();
  EXPECT_DOUBLE_EQ(answer()["max_overhead_percent"].get<double>(), 1.0);
  ASSERT_GT(no_plan, 0);
  EXPECT_GT(largest, no_plan) << "a plan lets a larger batch fit";
  ASSERT_TRUE(rows.count(no_plan) && rows.count(no_plan + 1)) << answer().dump(1);
  EXPECT_TRUE(rows.at(no_plan)["fits_without_plan"].get<bool>());
  EXPECT_FALSE(rows.at(no_plan + 1)["fits_without_plan"].get<bool>());
  ASSERT_TRUE(rows.count(largest) && rows.count(largest + 1)) << answer().dump(1);
  EXPECT_TRUE(rows.at(largest)["fits"].get<bool>());
  EXPECT_FALSE(rows.at(largest + 1)["fits"].get<bool>());
}

TEST(MaxBatchCli, EveryRowOfTheCurveIsConsistent) {
  for (const auto& [b, r] : rows_by_batch()) {
    SCOPED_TRACE("batch " + std::to_string(b));
    const bool fits = r["fits"], memory = r["fits_memory"], no_plan = r["fits_without_plan"];
    if (fits || no_plan) {
      EXPECT_TRUE(memory);
    }
    if (fits) {
      EXPECT_LE(r["overhead_percent"].get<double>(), 1.0 + 1e-9);
    }
    if (memory) {
      EXPECT_LE(r["peak_bytes"].get<std::uint64_t>(), 16ull << 30);
      EXPECT_GT(r["samples_per_s"].get<double>(), 0);
      EXPECT_GT(r["atp_model_samples_per_s"].get<double>(), 0);
      const double b_over_t = static_cast<double>(b) / r["iteration_seconds"].get<double>();
      EXPECT_NEAR(r["samples_per_s"].get<double>(), b_over_t, 1e-9 * b_over_t);
    }
    // Without a plan nothing moves: ATP's model is the simulated time.
    if (no_plan) {
      EXPECT_NEAR(r["atp_model_samples_per_s"].get<double>(), r["samples_per_s"].get<double>(),
                  1e-6 * r["samples_per_s"].get<double>());
    }
  }
}

TEST(MaxBatchCli, ThroughputPeaksAreTheBestRowsWithinTheLimit) {
  double best_sim = 0, best_atp = 0;
  std::int64_t sim_batch = 0, atp_batch = 0;
  for (const auto& [b, r] : rows_by_batch()) {
    if (!r["fits"].get<bool>()) continue;
    if (r["samples_per_s"].get<double>() > best_sim) {
      best_sim = r["samples_per_s"];
      sim_batch = b;
    }
    if (r["atp_model_samples_per_s"].get<double>() > best_atp) {
      best_atp = r["atp_model_samples_per_s"];
      atp_batch = b;
    }
  }
  EXPECT_EQ(answer()["throughput_batch"], sim_batch);
  EXPECT_DOUBLE_EQ(answer()["throughput_samples_per_s"].get<double>(), best_sim);
  EXPECT_EQ(answer()["atp_model_batch"], atp_batch);
  EXPECT_DOUBLE_EQ(answer()["atp_model_samples_per_s"].get<double>(), best_atp);
}

TEST(MaxBatchCli, TextNamesBothAnswersAndTheCurve) {
  auto r = run_memplan(kArgs);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string largest = std::to_string(answer()["largest_batch"].get<int>());
  const std::string no_plan = std::to_string(answer()["largest_batch_without_plan"].get<int>());
  EXPECT_NE(r.out.find("largest batch within 1% overhead: " + largest +
                       " (without a plan: " + no_plan + ")"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("highest throughput under ATP's model: batch " +
                       std::to_string(answer()["atp_model_batch"].get<int>())),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("ATP TP(B)"), std::string::npos) << r.out;
  for (const auto& row : answer()["table"])
    EXPECT_NE(
        r.out.find("\n" + std::string(7 - std::to_string(row["batch"].get<int>()).size(), ' ') +
                   std::to_string(row["batch"].get<int>()) + " "),
        std::string::npos)
        << "no curve row for batch " << row["batch"];
}

TEST(MaxBatchCli, NoBatchFitsIsInfeasible) {
  auto r = run_memplan("maxbatch " + std::string(MEMPLAN_FIXTURES) +
                       "/mlp.training.onnx --budget 1KiB --max-batch 4");
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_NE(r.err.find("no batch size fits"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace memplan::cli
