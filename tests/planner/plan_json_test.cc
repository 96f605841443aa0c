#include "planner/plan_json.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include "planner/memory_layout.h"
#include "planner/plan_validator.h"
#include "tiny_plan.h"
#include "util/errors.h"
#include "util/sha256.h"

namespace memplan::planner {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using test_util::plan_for;
using test_util::tiny_graph;

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void expect_same(const Plan& a, const Plan& b) {
  EXPECT_EQ(a.model_path, b.model_path);
  EXPECT_EQ(a.model_sha256, b.model_sha256);
  EXPECT_EQ(a.dims, b.dims);
  EXPECT_EQ(a.device.name, b.device.name);
  EXPECT_EQ(a.device.memory_bytes, b.device.memory_bytes);
  EXPECT_EQ(a.device.h2d_bytes_per_s, b.device.h2d_bytes_per_s);
  EXPECT_EQ(a.device.d2h_bytes_per_s, b.device.d2h_bytes_per_s);
  EXPECT_EQ(a.budget_bytes, b.budget_bytes);
  EXPECT_EQ(a.solver.name, b.solver.name);
  EXPECT_EQ(a.solver.status, b.solver.status);
  EXPECT_EQ(a.solver.objective_seconds, b.solver.objective_seconds);
  EXPECT_EQ(a.solver.bound_seconds, b.solver.bound_seconds);
  EXPECT_EQ(a.solver.solve_seconds, b.solver.solve_seconds);
  EXPECT_EQ(a.node_seconds, b.node_seconds);  // exact: doubles round-trip
  EXPECT_EQ(a.tensor_bytes, b.tensor_bytes);
  EXPECT_EQ(a.decisions, b.decisions);
  EXPECT_EQ(a.alias_of, b.alias_of);
  EXPECT_EQ(a.initial_host, b.initial_host);
  EXPECT_EQ(a.schedule, b.schedule);
  EXPECT_EQ(a.predicted.peak_bytes, b.predicted.peak_bytes);
  EXPECT_EQ(a.predicted.iteration_seconds, b.predicted.iteration_seconds);
  EXPECT_EQ(a.predicted.compute_seconds, b.predicted.compute_seconds);
  EXPECT_EQ(a.predicted.baseline_peak_bytes, b.predicted.baseline_peak_bytes);
  EXPECT_EQ(a.predicted.baseline_iteration_seconds, b.predicted.baseline_iteration_seconds);
}

// A plan that uses every part of the format: swap and recompute decisions,
// an alias, a bound, awkward doubles.
Plan rich_plan(const ir::Graph& g) {
  Plan plan = plan_for(g, test_util::swap_a_schedule(g));
  plan.node_seconds[1] = 1.0 / 3;  // no short decimal form
  plan.device.h2d_bytes_per_s = 25.6e9;
  plan.dims = g.dims;
  plan.decisions[*g.find_tensor("a")] = Decision::kSwap;
  plan.decisions[*g.find_tensor("c")] = Decision::kRecompute;
  plan.solver = {"ilp", "optimal", 8.25, 0.1 + 0.2, 1e-3};
  fill_predicted(g, plan);
  return plan;
}

TEST(PlanJson, WriteReadRoundTrip) {
  ir::Graph g = tiny_graph();
  Plan plan = rich_plan(g);
  std::string path = test::temp_path("plan") + ".json";
  write_plan_file(g, plan, path);
  Plan back = read_plan_file(g, path);
  expect_same(plan, back);
  EXPECT_TRUE(validate(g, back).valid) << validate(g, back).message;

  plan.solver.bound_seconds.reset();  // null on the wire
  write_plan_file(g, plan, path);
  EXPECT_FALSE(read_plan_file(g, path).solver.bound_seconds.has_value());
}

TEST(PlanJson, AliasRoundTrip) {
  ir::Graph g = tiny_graph();
  Plan plan = plan_for(g, {});
  plan.alias_of.assign(g.tensors().size(), ir::kNoTensor);
  plan.alias_of[*g.find_tensor("b")] = *g.find_tensor("a");
  json doc = plan_to_json(g, plan);
  EXPECT_EQ(doc["tensors"][3]["alias_of"], "a");
  EXPECT_FALSE(doc["tensors"][2].contains("alias_of"));
  expect_same(plan, plan_from_json(g, json::parse(doc.dump()), "mem"));
}

TEST(PlanJson, LayoutFollowsTheFormat) {
  ir::Graph g = tiny_graph();
  Plan plan = rich_plan(g);
  nlohmann::ordered_json doc = plan_to_json(g, plan);
  std::vector<std::string> keys;
  for (const auto& [k, v] : doc.items()) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"format", "version", "model", "device", "budget_bytes",
                                            "solver", "node_seconds", "tensors", "schedule",
                                            "predicted"}));
  EXPECT_EQ(doc["format"], "memplan.plan");
  EXPECT_EQ(doc["version"], 1);
  EXPECT_EQ(doc["node_seconds"].size(), g.nodes().size());
  ASSERT_EQ(doc["tensors"].size(), g.tensors().size());
  for (ir::TensorId t = 0; t < g.tensors().size(); ++t)  // TensorId order
    EXPECT_EQ(doc["tensors"][t]["name"], g.tensor(t).name);
  EXPECT_EQ(doc["tensors"][0].dump(),
            R"({"name":"x","bytes":32,"class":"parameter","decision":"keep"})");
  EXPECT_EQ(doc["schedule"][0].dump(), R"({"op":"compute","node":"mm"})");
  EXPECT_EQ(doc["schedule"][1].dump(), R"({"op":"swap_out","tensor":"a"})");
  EXPECT_EQ(doc["predicted"]["peak_bytes"], 192);
}

TEST(PlanJson, OutputIsDeterministicAndAtomic) {
  ir::Graph g = tiny_graph();
  Plan plan = rich_plan(g);
  fs::path dir = test::temp_path("plandir");
  fs::create_directories(dir);
  std::string path = (dir / "plan.json").string();
  write_plan_file(g, plan, path);
  std::string first = slurp(path);
  write_plan_file(g, rich_plan(g), path);
  EXPECT_EQ(slurp(path), first);
  EXPECT_EQ(first.back(), '\n');
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()),
            1);  // no temp left

  // A plan that cannot be written leaves the old file as it was.
  plan.predicted.iteration_seconds = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THROW(write_plan_file(g, plan, path), InvalidPlanError);
  EXPECT_EQ(slurp(path), first);
  EXPECT_THROW(write_plan_file(g, rich_plan(g), (dir / "no" / "plan.json").string()), InputError);
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1);
}

TEST(PlanJson, UnknownKeysAreIgnored) {
  ir::Graph g = tiny_graph();
  Plan plan = rich_plan(g);
  json doc = json::parse(plan_to_json(g, plan).dump());
  doc["comment"] = "hand-edited";
  doc["model"]["producer"] = {{"tool", "x"}};
  doc["schedule"][0]["note"] = 1;
  doc["tensors"][0]["shape"] = {2, 4};
  doc["predicted"]["refined_iteration_seconds"] = 7.9;
  expect_same(plan, plan_from_json(g, doc, "plan.json"));
}

struct BadCase {
  const char* what;
  std::function<void(json&)> edit;
  const char* message;  // expected in the error, after "plan.json: "
};

class PlanJsonBad : public ::testing::TestWithParam<BadCase> {};

TEST_P(PlanJsonBad, IsAnInputErrorNamingTheKey) {
  ir::Graph g = tiny_graph();
  json doc = json::parse(plan_to_json(g, rich_plan(g)).dump());
  GetParam().edit(doc);
  try {
    plan_from_json(g, doc, "plan.json");
    FAIL() << "accepted: " << GetParam().what;
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("plan.json: ", 0), 0u) << e.what();
    EXPECT_NE(std::string(e.what()).find(GetParam().message), std::string::npos) << e.what();
  }
}

const BadCase kBad[] = {
    {"top level", [](json& d) { d = json::array(); }, "(top level): expected an object"},
    {"format missing", [](json& d) { d.erase("format"); }, "format: missing"},
    {"format wrong", [](json& d) { d["format"] = "memplan.costs"; },
     "format: expected \"memplan.plan\""},
    {"version", [](json& d) { d["version"] = 2; }, "version: this reader knows version 1"},
    {"sha missing", [](json& d) { d["model"].erase("sha256"); }, "model.sha256: missing"},
    {"model type", [](json& d) { d["model"] = "m.onnx"; }, "model: expected an object"},
    {"dim negative", [](json& d) { d["model"]["dims"]["batch"] = -1; },
     "model.dims.\"batch\": must be >= 0"},
    {"memory negative", [](json& d) { d["device"]["memory_bytes"] = -5; },
     "device.memory_bytes: must be >= 0"},
    {"h2d type", [](json& d) { d["device"]["h2d_bytes_per_s"] = "fast"; },
     "device.h2d_bytes_per_s: expected a number"},
    {"d2h negative", [](json& d) { d["device"]["d2h_bytes_per_s"] = -1.5; },
     "device.d2h_bytes_per_s: must be >= 0"},
    {"budget float", [](json& d) { d["budget_bytes"] = 1.5; }, "budget_bytes: expected an integer"},
    {"budget missing", [](json& d) { d.erase("budget_bytes"); }, "budget_bytes: missing"},
    {"status", [](json& d) { d["solver"]["status"] = "great"; },
     "solver.status: unknown status \"great\""},
    {"bound type", [](json& d) { d["solver"]["bound_seconds"] = "none"; },
     "solver.bound_seconds: expected a number"},
    {"bound missing", [](json& d) { d["solver"].erase("bound_seconds"); },
     "solver.bound_seconds: missing"},
    {"solve negative", [](json& d) { d["solver"]["solve_seconds"] = -1; },
     "solver.solve_seconds: must be >= 0"},
    {"node unknown", [](json& d) { d["node_seconds"]["ghost"] = 1; },
     "node_seconds.\"ghost\": unknown node \"ghost\""},
    {"node missing", [](json& d) { d["node_seconds"].erase("neg"); },
     "node_seconds: no time for node \"neg\""},
    {"node negative", [](json& d) { d["node_seconds"]["mm"] = -0.5; },
     "node_seconds.\"mm\": must be >= 0"},
    {"tensors type", [](json& d) { d["tensors"] = json::object(); }, "tensors: expected an array"},
    {"tensor entry", [](json& d) { d["tensors"][1] = "w"; }, "tensors[1]: expected an object"},
    {"tensor bytes missing", [](json& d) { d["tensors"][1].erase("bytes"); },
     "tensors[1].bytes: missing"},
    {"tensor bytes negative", [](json& d) { d["tensors"][2]["bytes"] = -32; },
     "tensors[2].bytes: must be >= 0"},
    {"tensor unknown", [](json& d) { d["tensors"][0]["name"] = "ghost"; },
     "tensors[0].name: unknown tensor \"ghost\""},
    {"tensor twice", [](json& d) { d["tensors"][1]["name"] = "x"; },
     "tensors[1].name: tensor \"x\" is listed twice"},
    {"tensor not listed", [](json& d) { d["tensors"].erase(d["tensors"].size() - 1); },
     "tensors: tensor \"loss\" is not listed"},
    {"class", [](json& d) { d["tensors"][0]["class"] = "weights"; },
     "tensors[0].class: unknown class \"weights\""},
    {"decision", [](json& d) { d["tensors"][2]["decision"] = "drop"; },
     "tensors[2].decision: unknown decision \"drop\""},
    {"alias unknown", [](json& d) { d["tensors"][3]["alias_of"] = "ghost"; },
     "tensors[3].alias_of: unknown tensor"},
    {"alias type", [](json& d) { d["tensors"][3]["alias_of"] = 2; },
     "tensors[3].alias_of: expected a string"},
    {"schedule type", [](json& d) { d["schedule"] = "all"; }, "schedule: expected an array"},
    {"step type", [](json& d) { d["schedule"][4] = 7; }, "schedule[4]: expected an object"},
    {"op unknown", [](json& d) { d["schedule"][3]["op"] = "teleport"; },
     "schedule[3].op: unknown op \"teleport\""},
    {"op missing", [](json& d) { d["schedule"][3].erase("op"); }, "schedule[3].op: missing"},
    {"step node unknown", [](json& d) { d["schedule"][0]["node"] = "ghost"; },
     "schedule[0].node: unknown node \"ghost\""},
    {"step tensor unknown", [](json& d) { d["schedule"][1]["tensor"] = "ghost"; },
     "schedule[1].tensor: unknown tensor \"ghost\""},
    {"step wrong key",
     [](json& d) {
       d["schedule"][0] = {{"op", "compute"}, {"tensor", "a"}};
     },
     "schedule[0].tensor: a compute step names a node"},
    {"step no name", [](json& d) { d["schedule"][1].erase("tensor"); },
     "schedule[1].tensor: missing"},
    {"predicted missing", [](json& d) { d.erase("predicted"); }, "predicted: missing"},
    {"peak missing", [](json& d) { d["predicted"].erase("peak_bytes"); },
     "predicted.peak_bytes: missing"},
    {"iteration negative", [](json& d) { d["predicted"]["iteration_seconds"] = -1; },
     "predicted.iteration_seconds: must be >= 0"},
    {"baseline peak type", [](json& d) { d["predicted"]["baseline_peak_bytes"] = "192"; },
     "predicted.baseline_peak_bytes: expected an integer"},
};

INSTANTIATE_TEST_SUITE_P(Cases, PlanJsonBad, ::testing::ValuesIn(kBad), [](const auto& info) {
  std::string name = info.param.what;
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
});

TEST(PlanJson, FileErrors) {
  ir::Graph g = tiny_graph();
  std::string missing = test::temp_path("missing") + ".json";
  try {
    read_plan_file(g, missing);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(missing + ": cannot open"), std::string::npos) << e.what();
  }
  std::string bad = test::write_temp("bad.json", "{\"format\": ");
  try {
    read_plan_file(g, bad);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(bad + ": not valid JSON"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace memplan::planner

namespace memplan::planner {
namespace {

// plan_file_text() streams what plan_to_json() held as a document: the
// bytes must be those of the document dumped, whatever the plan holds.
TEST(PlanJson, StreamedTextIsTheDocumentDumped) {
  ir::Graph g = tiny_graph();
  std::vector<Plan> plans{rich_plan(g), rich_plan(g), rich_plan(g), plan_for(g, {})};
  plans[1].memory_layout = compute_memory_layout(g, plans[1]);
  plans[2].solver.bound_seconds.reset();
  plans[2].dims.clear();
  plans[2].model_path = "dir/caf\xc3\xa9 \"quoted\"\t.onnx";
  for (const Plan& p : plans) EXPECT_EQ(plan_file_text(g, p), plan_to_json(g, p).dump(2) + "\n");
}

TEST(PlanJson, StreamedTextRefusesWhatTheDocumentRefused) {
  ir::Graph g = tiny_graph();
  auto message = [&](const std::function<void()>& f) -> std::string {
    try {
      f();
    } catch (const std::exception& e) {
      return e.what();
    }
    return "no error";
  };
  Plan nan_time = rich_plan(g);
  nan_time.node_seconds[1] = std::numeric_limits<double>::infinity();
  Plan bad_name = rich_plan(g);
  bad_name.model_path = "bad \xff utf8";
  for (const Plan& p : {nan_time, bad_name}) {
    const std::string streamed = message([&] { plan_file_text(g, p); });
    EXPECT_NE(streamed, "no error");
    EXPECT_EQ(streamed, message([&] { (void)plan_to_json(g, p).dump(2); }));
  }
}

TEST(PlanJson, WritePlanFileReturnsTheSha256OfItsBytes) {
  ir::Graph g = tiny_graph();
  const std::string path = test::temp_path("hashed.plan.json");
  const std::string sha = write_plan_file(g, rich_plan(g), path);
  EXPECT_EQ(sha, util::sha256_hex(slurp(path)));
  EXPECT_EQ(sha.size(), 64u);
}

}  // namespace
}  // namespace memplan::planner
