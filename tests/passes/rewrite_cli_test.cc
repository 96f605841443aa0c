// `memplan rewrite`, `memplan plan`'s rewritten model and `memplan explain`
// as a user runs them, bad input included: one line, non-zero exit, and no
// file written.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>

#include "support/model_builder.h"
#include "support/run_command.h"

namespace memplan::passes {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using test::run_memplan;

std::string fixture(const std::string& name) {
  return std::string(MEMPLAN_FIXTURES) + "/" + name + ".training.onnx";
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::size_t lines(const std::string& text) {
  std::size_t n = 0;
  for (char c : text) n += c == '\n';
  return n;
}

// One plan of the mlp, made once for all tests here: vDNN (swap only) at
// half the baseline peak or, since the mlp's peak is mostly parameters and
// gradients, at the smallest budget memplan says it can reach.
class RewriteCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::string(test::temp_path("rewrite_cli"));
    budget_ = new std::string("50%");
    auto r = run_memplan(plan_args() + " -q -o " + *dir_);
    if (r.exit_code == 3) {
      // "... the smallest budget memplan can reach is 5.94 MiB (6224502 B)"
      std::smatch m;
      ASSERT_TRUE(std::regex_search(r.err, m, std::regex(R"(can reach is [^(]*\((\d+) B\))")))
          << r.err;
      *budget_ = m[1];
      r = run_memplan(plan_args() + " -q -o " + *dir_);
    }
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  static std::string plan_args() {
    return "plan " + fixture("mlp") + " --dim batch=64 --solver vdnn --budget " + *budget_;
  }
  static void TearDownTestSuite() {
    std::error_code ec;
    fs::remove_all(*dir_, ec);
    delete dir_;
    delete budget_;
  }
  static std::string plan() { return *dir_ + "/plan.json"; }
  static std::string planned_model() { return *dir_ + "/model.memplan.onnx"; }

  // The plan, edited, saved under a new name.
  static std::string edited(const std::function<void(json&)>& edit) {
    json doc = json::parse(slurp(plan()));
    edit(doc);
    return test::write_temp("edited_plan.json", doc.dump(2));
  }

  // Runs `rewrite` expecting failure: exit `code`, one line on stderr
  // naming `what`, nothing at the output path.
  static void expect_refused(const std::string& args, int code, const std::string& what) {
    std::string out = test::temp_path("refused") + ".onnx";
    auto r = run_memplan("rewrite " + args + " -o " + out);
    EXPECT_EQ(r.exit_code, code) << r.err;
    EXPECT_EQ(lines(r.err), 1u) << r.err;
    EXPECT_NE(r.err.find(what), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(out));
  }

  static std::string* dir_;
  static std::string* budget_;
};
std::string* RewriteCli::dir_ = nullptr;
std::string* RewriteCli::budget_ = nullptr;

TEST_F(RewriteCli, PlanWritesTheRewrittenModelBesidePlanJson) {
  ASSERT_TRUE(fs::exists(planned_model()));
  // `rewrite` of the same plan gives the same bytes: the summary records the
  // sha256 of plan.json's bytes either way.
  std::string out = test::temp_path("rewritten") + ".onnx";
  auto r = run_memplan("rewrite " + fixture("mlp") + " --plan " + plan() + " -o " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("wrote " + out + ": "), std::string::npos) << r.out;
  EXPECT_TRUE(slurp(out) == slurp(planned_model()));

  std::string skip = test::temp_path("no_rewrite");
  auto n = run_memplan(plan_args() + " --no-rewrite -o " + skip);
  ASSERT_EQ(n.exit_code, 0) << n.err;
  EXPECT_TRUE(fs::exists(skip + "/plan.json"));
  EXPECT_FALSE(fs::exists(skip + "/model.memplan.onnx"));
  EXPECT_EQ(n.out.find("model.memplan.onnx"), std::string::npos) << n.out;
}

TEST_F(RewriteCli, ExplainListsTheSummaryAndLayers) {
  auto r = run_memplan("explain " + planned_model());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("rewritten by memplan from plan "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("vdnn"), std::string::npos) << r.out;

  auto j = run_memplan("explain --json " + planned_model());
  ASSERT_EQ(j.exit_code, 0) << j.err;
  json doc = json::parse(j.out);
  EXPECT_EQ(doc["solver"], "vdnn");
  EXPECT_EQ(doc["plan_sha256"].get<std::string>().size(), 64u);
  std::size_t swaps = 0, clones = 0, reloads = 0;
  for (const auto& layer : doc["layers"]) {
    EXPECT_EQ(layer["layer"].get<std::string>().front(), '/')
        << layer.dump();  // mlp's layers: /fc1, /relu1, …
    swaps += layer["swaps"].size();
    for (const auto& s : layer["swaps"]) reloads += s["reloads"].get<std::size_t>();
    for (const auto& c : layer["recomputes"]) clones += c["clones"].get<std::size_t>();
  }
  EXPECT_EQ(swaps, doc["swap_outs"].get<std::size_t>());
  // Each SwapIn reads its host copy through an anchor, and counts all the same.
  EXPECT_EQ(reloads, doc["swap_ins"].get<std::size_t>());
  EXPECT_EQ(clones, doc["recomputes"].get<std::size_t>());
  EXPECT_GT(swaps + clones, 0u) << "half the peak needs something evicted";
}

// vDNN swaps only: memplan's runtime copies; ONNX Runtime cannot (its
// Identity functions vanish), and explain says so per engine.
TEST_F(RewriteCli, ExplainSaysWhatEachEngineRealises) {
  auto j = run_memplan("explain --json " + planned_model());
  ASSERT_EQ(j.exit_code, 0) << j.err;
  json doc = json::parse(j.out);
  ASSERT_EQ(doc["engines"].size(), 3u);
  EXPECT_EQ(doc["engines"][0]["engine"], "memplan");
  EXPECT_NE(doc["engines"][0]["swaps"].get<std::string>().find("copies in"), std::string::npos);
  EXPECT_EQ(doc["engines"][1]["engine"], "ort-cpu");
  EXPECT_EQ(doc["engines"][1]["swaps"].get<std::string>().rfind("not realised", 0), 0u);
  // Reloads, and with the whole order anchored (the default) other nodes too.
  EXPECT_GT(doc["anchors"].get<std::size_t>(), 0u);

  auto one = run_memplan("explain --engine ort-cuda " + planned_model());
  ASSERT_EQ(one.exit_code, 0) << one.err;
  EXPECT_NE(one.out.find("engine     ort-cuda: "), std::string::npos) << one.out;
  EXPECT_EQ(one.out.find("engine     ort-cpu: "), std::string::npos) << one.out;
  auto bad = run_memplan("explain --engine tensorrt " + planned_model());
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_EQ(bad.err.rfind("--engine: tensorrt not in {memplan,ort-cpu,ort-cuda}", 0), 0u)
      << bad.err;
}

// Without anchors the rewrite says so, and explain tells what ORT then does.
TEST_F(RewriteCli, RewriteWithoutAnchorsSaysSo) {
  std::string out = test::temp_path("unanchored") + ".onnx";
  auto r =
      run_memplan("rewrite " + fixture("mlp") + " --plan " + plan() + " --anchors none -o " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find(", 0 nodes ordered by anchors"), std::string::npos) << r.out;
  auto j = run_memplan("explain --json " + out);
  ASSERT_EQ(j.exit_code, 0) << j.err;
  EXPECT_EQ(json::parse(j.out)["anchors"], 0);
  auto bad = run_memplan("rewrite " + fixture("mlp") + " --plan " + plan() + " --anchors some -o " +
                         out + "2");
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_EQ(bad.err.rfind("--anchors: some not in {remakes,all,none}", 0), 0u) << bad.err;
  EXPECT_FALSE(fs::exists(out + "2"));
}

TEST_F(RewriteCli, ExplainRefusesAModelMemplanDidNotWrite) {
  auto r = run_memplan("explain " + fixture("mlp"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(lines(r.err), 1u) << r.err;
  EXPECT_NE(r.err.find("no memplan summary"), std::string::npos) << r.err;
}

TEST_F(RewriteCli, PlanForAnotherModelIsRefused) {
  // Another model altogether (other nodes, other sha256).
  expect_refused(fixture("mlp_dropout") + " --plan " + plan(), 4, "made for another model");
  // Same graph, another file: the sha256 differs.
  std::string copy = test::temp_path("mlp_copy") + ".onnx";
  std::string bytes = slurp(fixture("mlp"));
  onnx::ModelProto m;
  ASSERT_TRUE(m.ParseFromString(bytes));
  m.set_doc_string("another file");
  std::ofstream(copy, std::ios::binary) << m.SerializeAsString();
  expect_refused(copy + " --plan " + plan(), 4, "made for another model");
}

TEST_F(RewriteCli, InvalidPlanIsRefused) {
  // The first compute step removed: its node is never computed.
  std::string bad = edited([](json& doc) {
    auto& steps = doc["schedule"];
    for (auto it = steps.begin(); it != steps.end(); ++it)
      if ((*it)["op"] == "compute") {
        steps.erase(it);
        break;
      }
  });
  expect_refused(fixture("mlp") + " --plan " + bad, 4, "invalid");
  expect_refused(fixture("mlp") + " --plan " + test::write_temp("garbage.json", "{not json"), 2,
                 "");
}

TEST_F(RewriteCli, UnwritableOutputIsRefused) {
  auto r = run_memplan("rewrite " + fixture("mlp") + " --plan " + plan() +
                       " -o /nonexistent-dir/out.onnx");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(lines(r.err), 1u) << r.err;
  EXPECT_NE(r.err.find("/nonexistent-dir/out.onnx"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists("/nonexistent-dir"));
}

}  // namespace
}  // namespace memplan::passes
