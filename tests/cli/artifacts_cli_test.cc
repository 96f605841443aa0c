// ONNX Runtime's artifacts folder (training_model.onnx + optimizer_model.onnx)
// in place of a model file: one iteration, optimizer step included.
#include <gtest/gtest.h>

#include <algorithm>
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

const std::string kFixtures = MEMPLAN_FIXTURES;

std::size_t lines(const std::string& s) {
  return static_cast<std::size_t>(std::count(s.begin(), s.end(), '\n'));
}

// A folder as generate_artifacts leaves it, from the committed fixtures.
std::string folder_of(const std::string& fixture) {
  const std::string dir = test::temp_path("artifacts_" + fixture);
  fs::create_directories(dir);
  fs::copy_file(kFixtures + "/" + fixture + ".training.onnx", dir + "/training_model.onnx");
  fs::copy_file(kFixtures + "/" + fixture + ".optimizer.onnx", dir + "/optimizer_model.onnx");
  return dir;
}

nlohmann::json inspect_json(const std::string& model_args) {
  auto r = run_memplan("inspect " + model_args + " --dim batch=8 --dim seq=128 --json");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return r.exit_code == 0 ? nlohmann::json::parse(r.out) : nlohmann::json::object();
}

TEST(ArtifactsCli, InspectShowsTheOptimizerState) {
  const std::string dir = folder_of("gpt2_small");
  auto r = run_memplan("inspect " + dir + " --dim batch=8 --dim seq=128");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("optimizer  " + dir + "/optimizer_model.onnx (148 AdamW steps"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("resident the whole iteration"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  optimizer_state "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  total "), std::string::npos) << r.out;

  const auto folder = inspect_json(dir);
  const auto alone = inspect_json(kFixtures + "/gpt2_small.training.onnx");
  ASSERT_TRUE(folder.contains("resident_throughout"));
  EXPECT_EQ(folder["model"]["path"], dir + "/training_model.onnx");
  EXPECT_EQ(folder["model"]["optimizer"]["steps"], 148);
  EXPECT_TRUE(alone["model"]["optimizer"].is_null());
  const auto& with = folder["resident_throughout"];
  const auto& without = alone["resident_throughout"];
  // GPT-2 small: 124,439,808 fp32 parameters, every one trained by AdamW,
  // two moments each; learning rate, step and the reset flag besides.
  const std::uint64_t params = 124'439'808ull * 4;
  EXPECT_EQ(with["optimizer_state"].get<std::uint64_t>(), 2 * params + 4 + 8 + 1);
  EXPECT_EQ(without["optimizer_state"].get<std::uint64_t>(), 1u);
  EXPECT_EQ(with["gradient"], without["gradient"]);
  EXPECT_EQ(with["gradient"].get<std::uint64_t>(), params);
  EXPECT_EQ(with["total"].get<std::uint64_t>(),
            without["total"].get<std::uint64_t>() + 2 * params + 12);
  EXPECT_EQ(folder["baseline_peak"]["bytes"].get<std::uint64_t>() -
                alone["baseline_peak"]["bytes"].get<std::uint64_t>(),
            2 * params + 12);
  EXPECT_GT(folder["costs"]["backward_seconds"].get<double>(),
            alone["costs"]["backward_seconds"].get<double>());
  // --optimizer beside the file is the same iteration.
  const auto flag = inspect_json(kFixtures + "/gpt2_small.training.onnx --optimizer " + kFixtures +
                                 "/gpt2_small.optimizer.onnx");
  EXPECT_EQ(flag["resident_throughout"], folder["resident_throughout"]);
  EXPECT_EQ(flag["baseline_peak"]["bytes"], folder["baseline_peak"]["bytes"]);
}

TEST(ArtifactsCli, PlanThenValidateOnAFolder) {
  const std::string dir = folder_of("gpt2_small");
  const std::string out = test::temp_path("artifacts_plan");
  // 70 % of the baseline with the moments resident: activations swapped or
  // recomputed around 1.85 GiB that stays.
  auto p = run_memplan("plan " + dir +
                       " --dim batch=8 --dim seq=512 --budget 70% --solver greedy -q -o " + out);
  ASSERT_EQ(p.exit_code, 0) << p.err;
  // The rewrite would carry the training graph only: left out, said once.
  EXPECT_FALSE(fs::exists(out + "/model.memplan.onnx"));
  EXPECT_NE(p.err.find("model.memplan.onnx not written"), std::string::npos) << p.err;
  EXPECT_TRUE(fs::exists(out + "/report.md"));

  std::ifstream in(out + "/plan.json");
  const auto plan = nlohmann::json::parse(in);
  EXPECT_EQ(plan["model"]["path"], dir + "/training_model.onnx");
  EXPECT_EQ(plan["model"]["optimizer"]["path"], dir + "/optimizer_model.onnx");
  EXPECT_EQ(plan["model"]["optimizer"]["sha256"].get<std::string>().size(), 64u);
  EXPECT_TRUE(plan["node_seconds"].contains("AdamWStep/transformer.wte.weight"));
  EXPECT_LE(plan["predicted"]["peak_bytes"].get<std::uint64_t>(),
            plan["budget_bytes"].get<std::uint64_t>());

  auto v = run_memplan("validate " + dir + " " + out + "/plan.json");
  EXPECT_EQ(v.exit_code, 0) << v.err;
  EXPECT_NE(v.out.find("valid: peak"), std::string::npos) << v.out;
  auto s = run_memplan("simulate " + dir + " --plan " + out + "/plan.json");
  EXPECT_EQ(s.exit_code, 0) << s.err;

  // Against the training graph alone it is another iteration, said as such.
  auto alone = run_memplan("validate " + dir + "/training_model.onnx " + out + "/plan.json");
  EXPECT_EQ(alone.exit_code, 4);
  EXPECT_EQ(lines(alone.err), 1u) << alone.err;
  EXPECT_NE(alone.err.find("made with the optimizer model"), std::string::npos) << alone.err;
}

TEST(ArtifactsCli, RewriteOfAFolderIsRefusedInOneLine) {
  const std::string dir = folder_of("mlp");
  const std::string out = test::temp_path("artifacts_plan_for_rewrite");
  ASSERT_EQ(run_memplan("plan " + dir +
                        " --dim batch=64 --budget 100% --solver greedy -q "
                        "--outputs plan -o " +
                        out)
                .exit_code,
            0);
  const std::string rewritten = test::temp_path("artifacts_rewritten") + ".onnx";
  for (const std::string& args :
       {"rewrite " + dir + " --plan " + out + "/plan.json -o " + rewritten,
        "rewrite " + kFixtures + "/mlp.training.onnx --optimizer " + kFixtures +
            "/mlp.optimizer.onnx --plan " + out + "/plan.json -o " + rewritten,
        "explain " + dir}) {
    auto r = run_memplan(args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.err;
    EXPECT_EQ(lines(r.err), 1u) << r.err;
    EXPECT_NE(r.err.find("rewriting ONNX Runtime's optimizer model is not done"), std::string::npos)
        << r.err;
    EXPECT_FALSE(fs::exists(rewritten));
  }
  // The folder's plan with the training graph alone: refused as such.
  auto r1 = run_memplan("rewrite " + dir + "/training_model.onnx --plan " + out + "/plan.json -o " +
                        rewritten);
  EXPECT_EQ(r1.exit_code, 4) << r1.err;
  EXPECT_EQ(lines(r1.err), 1u) << r1.err;
  EXPECT_NE(r1.err.find("model.optimizer"), std::string::npos) << r1.err;
  EXPECT_FALSE(fs::exists(rewritten));
  // Asked for by name, the rewritten model is refused before any planning.
  const std::string out2 = test::temp_path("artifacts_outputs_model");
  auto r =
      run_memplan("plan " + dir + " --dim batch=64 --budget 100% --outputs plan,model -o " + out2);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(lines(r.err), 1u) << r.err;
  EXPECT_FALSE(fs::exists(out2 + "/plan.json"));
}

TEST(ArtifactsCli, BadFoldersInOneLine) {
  const std::string empty = test::temp_path("artifacts_none");
  fs::create_directories(empty);
  auto r = run_memplan("inspect " + empty + " --dim batch=8");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(lines(r.err), 1u) << r.err;
  EXPECT_NE(r.err.find("no training_model.onnx"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty());

  const std::string dir = folder_of("mlp");
  auto both = run_memplan("inspect " + dir + " --optimizer " + kFixtures +
                          "/mlp.optimizer.onnx --dim batch=8");
  EXPECT_EQ(both.exit_code, 1);
  EXPECT_EQ(lines(both.err), 1u) << both.err;

  // An optimizer model that is not ORT's AdamW: the training graph given twice.
  auto wrong = run_memplan("inspect " + kFixtures + "/mlp.training.onnx --optimizer " + kFixtures +
                           "/mlp.training.onnx --dim batch=8");
  EXPECT_EQ(wrong.exit_code, 2);
  EXPECT_EQ(lines(wrong.err), 1u) << wrong.err;
  EXPECT_NE(wrong.err.find("AdamW"), std::string::npos) << wrong.err;
}

}  // namespace
}  // namespace memplan::cli
