// `memplan simulate` end to end: the binary as a user runs it.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "ir/device_presets.h"
#include "ir/node_costs.h"
#include "ir/onnx_loader.h"
#include "planner/baseline_plan.h"
#include "planner/plan_json.h"
#include "support/model_builder.h"
#include "support/run_command.h"

namespace memplan {
namespace {

using nlohmann::json;
using test::run_memplan;

const std::string kFixtures = MEMPLAN_FIXTURES;
const std::string kMlp = kFixtures + "/mlp.training.onnx";
const std::string kMlpArgs = kMlp + " --dim batch=64";
// The two largest activations of mlp at batch 64 (see `memplan inspect`).
const std::string kRelu1 = "/relu1/Relu_output_0";
const std::string kRelu2 = "/relu2/Relu_output_0";

std::size_t lines(const std::string& s) {
  return static_cast<std::size_t>(std::count(s.begin(), s.end(), '\n'));
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string decisions_file(const json& doc) {
  return test::write_temp("decisions.json", doc.dump());
}

json simulate_json(const std::string& args, int want_exit = 0) {
  auto r = run_memplan("simulate " + args + " --json");
  EXPECT_EQ(r.exit_code, want_exit) << r.err;
  if (r.out.empty()) return json::object();
  return json::parse(r.out);
}

// No decisions: the baseline's compute, in the planning order `plan` uses
// (weight-gradient products and accumulators issued early), which lowers
// mlp's peak from 6.76 to 6.22 MB without costing time.
TEST(SimulateCli, NoDecisionsIsTheBaselineTimeInThePlanningOrder) {
  json j = simulate_json(kMlpArgs + " --decisions " + decisions_file({{"swap", json::array()}}));
  EXPECT_LT(j["peak"]["bytes"].get<std::uint64_t>(),
            j["peak"]["baseline_bytes"].get<std::uint64_t>());
  EXPECT_GT(j["peak"]["bytes"].get<std::uint64_t>(), 0u);
  EXPECT_DOUBLE_EQ(j["iteration"]["seconds"].get<double>(),
                   j["iteration"]["baseline_seconds"].get<double>());
  EXPECT_DOUBLE_EQ(j["iteration"]["overhead_percent"].get<double>(), 0.0);
  EXPECT_EQ(j["swapped_tensors"], 0);
  EXPECT_EQ(j["steps"]["compute"], 26);
  EXPECT_EQ(j["steps"]["swap_out"], 0);
  EXPECT_TRUE(j["fits"].get<bool>());
  EXPECT_TRUE(j["budget_bytes"].is_null());
}

TEST(SimulateCli, SwapsAddTransfersAndNeverSpeedUp) {
  json j = simulate_json(kMlpArgs + " --decisions " + decisions_file({{"swap", {kRelu1, kRelu2}}}));
  EXPECT_EQ(j["swapped_tensors"], 2);
  EXPECT_EQ(j["steps"]["swap_out"], 2);
  EXPECT_EQ(j["steps"]["swap_in"], 2);
  // Every node still runs once on the compute stream, so the iteration is at
  // least the baseline's, and compute time is exactly it.
  const double base = j["iteration"]["baseline_seconds"];
  EXPECT_GE(j["iteration"]["seconds"].get<double>(), base);
  EXPECT_NEAR(j["iteration"]["compute_seconds"].get<double>(), base, 1e-12);
  EXPECT_LE(j["peak"]["bytes"].get<std::uint64_t>(),
            j["peak"]["baseline_bytes"].get<std::uint64_t>());

  // The map form says the same.
  json m = simulate_json(kMlpArgs + " --decisions " +
                         decisions_file({{"decisions", {{kRelu1, "swap"}, {kRelu2, "swap"}}}}));
  EXPECT_EQ(m["peak"], j["peak"]);
  EXPECT_EQ(m["iteration"], j["iteration"]);
}

TEST(SimulateCli, RecomputeCountsAndTextReport) {
  std::string d = decisions_file({{"recompute", {kRelu1}}});
  json j = simulate_json(kMlpArgs + " --decisions " + d);
  EXPECT_EQ(j["recomputed_tensors"], 1);
  EXPECT_GE(j["steps"]["recompute"].get<int>(), 1);
  EXPECT_GT(j["iteration"]["recompute_seconds"].get<double>(), 0.0);

  auto r = run_memplan("simulate " + kMlpArgs + " --decisions " + d);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* word :
       {"peak", "vs baseline", "overhead", "compute", "stall", "device->host", "1 recomputed"})
    EXPECT_NE(r.out.find(word), std::string::npos) << word << " in\n" << r.out;
}

// A graph output cannot leave the device; training state (a graph input
// that the backward reads again) can.
TEST(SimulateCli, DecisionsThatCannotApplyAreKeptWithAWarning) {
  ir::LoadOptions o;
  o.dims["batch"] = 64;
  ir::Graph g = ir::load_model(kMlp, o).graph;
  std::string output = g.tensor(g.graph_outputs().back()).name;
  auto r = run_memplan("simulate " + kMlpArgs + " --json --decisions " +
                       decisions_file({{"swap", {output}}}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = json::parse(r.out);
  EXPECT_EQ(j["swapped_tensors"], 0);
  EXPECT_EQ(j["fell_back_to_keep"], json::array({output}));
  EXPECT_NE(r.err.find("warning"), std::string::npos);
  EXPECT_NE(r.err.find(output), std::string::npos) << r.err;
  std::string weight;
  for (ir::TensorId t : g.graph_inputs())
    if (g.tensor(t).cls == ir::TensorClass::kParameter && g.tensor(t).consumers.size() > 1)
      weight = g.tensor(t).name;
  ASSERT_FALSE(weight.empty());
  j = simulate_json(kMlpArgs + " --decisions " + decisions_file({{"swap", {weight}}}));
  EXPECT_EQ(j["swapped_tensors"], 1) << weight;
  EXPECT_EQ(j["fell_back_to_keep"], json::array());
}

// Chrome trace: Trace Event Format, three named stream tracks, one slice
// per compute/recompute/swap step, a memory counter reaching the peak.
void expect_trace(const std::string& path, const json& report) {
  json t = json::parse(slurp(path));
  ASSERT_TRUE(t["traceEvents"].is_array());
  std::map<std::string, int> slices;
  std::set<int> named;
  std::uint64_t high = 0;
  for (const json& e : t["traceEvents"]) {
    ASSERT_TRUE(e.contains("ph") && e.contains("pid") && e.contains("name")) << e;
    if (e["ph"] == "M" && e["name"] == "thread_name") named.insert(e["tid"].get<int>());
    if (e["ph"] == "X") {
      ASSERT_TRUE(e.contains("ts") && e.contains("tid") && e.contains("dur")) << e;
      EXPECT_GE(e["dur"].get<double>(), 0.0);
      ++slices[e["cat"].get<std::string>()];
    }
    if (e["ph"] == "C" && e["name"] == "device memory")
      high = std::max(high, e["args"]["bytes"].get<std::uint64_t>());
  }
  EXPECT_EQ(named, (std::set<int>{1, 2, 3}));
  for (const char* op : {"compute", "recompute", "swap_out", "swap_in"})
    EXPECT_EQ(slices[op], report["steps"][op].get<int>()) << op;
  EXPECT_GT(high, 0u);
  EXPECT_LE(high, report["peak"]["bytes"].get<std::uint64_t>());
}

// Parses the SVG with Python's XML parser; prints the vertex count of the
// plan's polyline.
int svg_plan_vertices(const std::string& path) {
  std::string script =
      test::write_temp("svg.py",
                       "import sys, xml.etree.ElementTree as ET\n"
                       "root = ET.parse(sys.argv[1]).getroot()\n"
                       "assert root.tag == '{http://www.w3.org/2000/svg}svg', root.tag\n"
                       "p = [e for e in root.iter() if e.get('id') == 'plan'][0]\n"
                       "print(len(p.get('points').split()))\n");
  std::string out = test::temp_path("svg.out");
  int rc = std::system(("python3 " + script + " " + path + " >" + out + " 2>&1").c_str());
  EXPECT_EQ(rc, 0) << slurp(out);
  return rc == 0 ? std::stoi(slurp(out)) : -1;
}

TEST(SimulateCli, WritesTraceAndSvg) {
  std::string trace = test::temp_path("mlp.trace.json"), svg = test::temp_path("mlp.svg");
  json j = simulate_json(kMlpArgs + " --decisions " +
                         decisions_file({{"swap", {kRelu1}}, {"recompute", {kRelu2}}}) +
                         " --trace " + trace + " --svg " + svg);
  EXPECT_EQ(j["trace"], trace);
  expect_trace(trace, j);
  EXPECT_GT(svg_plan_vertices(svg), 2);
}

TEST(SimulateCli, BigModelPlotIsDownsampled) {
  // gpt2_small makes thousands of memory changes; the plot keeps <= 4000.
  std::string svg = test::temp_path("gpt2.svg");
  ir::LoadOptions o;
  o.dims = {{"batch", 2}, {"seq", 128}};
  ir::Graph g = ir::load_model(kFixtures + "/gpt2_small.training.onnx", o).graph;
  json swap = json::array();
  for (const auto& t : g.tensors())
    if (t.cls == ir::TensorClass::kActivation) swap.push_back(t.name);
  json j = simulate_json(kFixtures +
                         "/gpt2_small.training.onnx --dim batch=2 --dim seq=128 --decisions " +
                         decisions_file({{"swap", swap}}) + " --svg " + svg);
  // (Tensors read again right after the forward come back before their
  // copy out ends: those copies are dropped, about half of them here.)
  EXPECT_GT(j["steps"]["swap_out"].get<int>(), 40);
  int v = svg_plan_vertices(svg);
  EXPECT_GT(v, 100);
  EXPECT_LE(v, 4000);
}

TEST(SimulateCli, OverBudgetExitsThreeAndStillWritesOutputs) {
  std::string trace = test::temp_path("over.trace.json"), svg = test::temp_path("over.svg");
  auto r =
      run_memplan("simulate " + kMlpArgs + " --budget 1MiB --json --decisions " +
                  decisions_file({{"swap", {kRelu1}}}) + " --trace " + trace + " --svg " + svg);
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_EQ(lines(r.err), 1u) << r.err;
  EXPECT_NE(r.err.find("memplan: error:"), std::string::npos);
  json j = json::parse(r.out);
  EXPECT_FALSE(j["fits"].get<bool>());
  EXPECT_EQ(j["budget_bytes"], 1 << 20);
  EXPECT_FALSE(j["diagnosis"].get<std::string>().empty());
  EXPECT_TRUE(std::filesystem::exists(trace));
  expect_trace(trace, j);
  EXPECT_GT(svg_plan_vertices(svg), 2);
}

// A plan's own decisions, simulated, give the plan back: the what-if is
// scheduled in the same planning order as `plan` (GPT-2's backward reads
// shapes early, which moves its peak).
TEST(SimulateCli, APlansDecisionsReproduceItsPeakAndTime) {
  const std::string model = std::string(MEMPLAN_SOURCE_DIR) + "/examples/gpt2_small.training.onnx";
  const std::string dims = " --dim batch=8 --dim seq=512";
  const std::string out = test::temp_path("reproduce");
  auto planned = run_memplan("plan " + model + dims + " --budget 60% --solver greedy -q -o " + out);
  ASSERT_EQ(planned.exit_code, 0) << planned.err;
  const json plan = json::parse(slurp(out + "/plan.json"));
  json decisions = {{"swap", json::array()}, {"recompute", json::array()}};
  for (const auto& t : plan["tensors"])
    if (t["decision"] != "keep") decisions[t["decision"].get<std::string>()].push_back(t["name"]);
  ASSERT_GT(decisions["swap"].size() + decisions["recompute"].size(), 0u);
  const json sim = simulate_json(model + dims + " --budget " +
                                 std::to_string(plan["budget_bytes"].get<std::uint64_t>()) +
                                 "B --decisions " + decisions_file(decisions));
  EXPECT_TRUE(sim["fits"].get<bool>());
  EXPECT_EQ(sim["peak"]["bytes"], plan["predicted"]["peak_bytes"]);
  EXPECT_DOUBLE_EQ(sim["iteration"]["seconds"].get<double>(),
                   plan["predicted"]["iteration_seconds"].get<double>());
}

struct BadCase {
  const char* label;
  std::string decisions;  // file contents
  const char* expect;
};

class SimulateBadDecisions : public ::testing::TestWithParam<BadCase> {};

TEST_P(SimulateBadDecisions, ExitTwoNamingFileAndProblem) {
  std::string path = test::write_temp("bad.json", GetParam().decisions);
  auto r = run_memplan("simulate " + kMlpArgs + " --decisions " + path);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(lines(r.err), 1u) << r.err;
  EXPECT_NE(r.err.find(path), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(GetParam().expect), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty());
}

INSTANTIATE_TEST_SUITE_P(
    Cases, SimulateBadDecisions,
    ::testing::Values(
        BadCase{"unknown", R"({"swap": ["no_such_tensor"]})",
                "'no_such_tensor' is not in the graph"},
        BadCase{"unknown_in_map", R"({"decisions": {"ghost": "swap"}})", "'ghost'"},
        BadCase{"not_json", "{swap:", "not valid JSON"},
        BadCase{"wrong_shape", R"(["a"])", "expected"},
        BadCase{"not_a_list", R"({"swap": "x"})", "expected an array"},
        BadCase{"not_a_name", R"({"recompute": [3]})", "recompute[0]"},
        BadCase{"bad_decision", R"({"decisions": {"/relu1/Relu_output_0": "drop"}})", "\"drop\""},
        BadCase{"twice",
                R"({"swap": ["/relu1/Relu_output_0"], "recompute": ["/relu1/Relu_output_0"]})",
                "two decisions"}),
    [](const auto& info) { return std::string(info.param.label); });

TEST(SimulateCli, UsageErrors) {
  auto d = decisions_file({{"swap", json::array()}});
  EXPECT_EQ(run_memplan("simulate --help").exit_code, 0);
  EXPECT_EQ(run_memplan("simulate " + kMlpArgs).exit_code, 1);  // neither --plan nor --decisions
  EXPECT_EQ(run_memplan("simulate " + kMlpArgs + " --decisions " + d + " --plan x.json").exit_code,
            1);
  auto r = run_memplan("simulate " + kMlpArgs + " --decisions " + d + " --budget lots");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("--budget"), std::string::npos) << r.err;
  EXPECT_EQ(run_memplan("simulate " + kMlpArgs + " --decisions /no/such/file.json").exit_code, 2);
  r = run_memplan("simulate " + kMlpArgs + " --decisions " + d + " --trace /no/such/dir/t.json");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("/no/such/dir/t.json"), std::string::npos) << r.err;
}

// A baseline plan.json for mlp at batch 64, made with the library.
std::string write_baseline_plan(bool broken = false) {
  ir::LoadOptions o;
  o.dims["batch"] = 64;
  ir::LoadedModel m = ir::load_model(kMlp, o);
  ir::NodeCosts costs;
  costs.device = ir::device_preset("a100-40gb");
  costs.seconds.assign(m.graph.nodes().size(), 1e-4);
  planner::Plan plan = planner::baseline_plan(m.graph, costs, {kMlp, m.sha256, std::nullopt});
  if (broken) plan.schedule.erase(plan.schedule.begin());  // the first compute is gone
  std::string path = test::temp_path("plan.json");
  planner::write_plan_file(m.graph, plan, path);
  return path;
}

TEST(SimulateCli, PlanFileIsSimulatedWithItsOwnTimes) {
  std::string plan = write_baseline_plan();
  json j = simulate_json(kMlp + " --plan " + plan);  // dims come from the plan
  EXPECT_EQ(j["what_if"]["plan"], plan);
  EXPECT_EQ(j["peak"]["bytes"], j["peak"]["baseline_bytes"]);
  EXPECT_NEAR(j["iteration"]["seconds"].get<double>(), 26 * 1e-4,
              1e-12);  // node_seconds, not the roofline
  EXPECT_NEAR(j["iteration"]["overhead_percent"].get<double>(), 0.0, 1e-9);
  EXPECT_TRUE(j["fits"].get<bool>());

  json over = simulate_json(kMlp + " --plan " + plan + " --budget 1KiB", 3);
  EXPECT_FALSE(over["fits"].get<bool>());
  EXPECT_EQ(over["budget_bytes"], 1024);
}

TEST(SimulateCli, InvalidPlanExitsFour) {
  std::string plan = write_baseline_plan(true);
  auto r = run_memplan("simulate " + kMlp + " --plan " + plan);
  EXPECT_EQ(r.exit_code, 4) << r.err;
  EXPECT_NE(r.err.find(plan), std::string::npos) << r.err;
}

}  // namespace
}  // namespace memplan
