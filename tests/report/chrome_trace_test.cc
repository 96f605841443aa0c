#include "report/chrome_trace.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "planner/simulator.h"
#include "planner/tiny_plan.h"
#include "support/model_builder.h"
#include "util/errors.h"

namespace memplan::planner {
// The renderers under test, beside the planner types they read.
using namespace memplan::report;
namespace {

using nlohmann::json;
using test_util::plan_for;
using test_util::tiny_graph;

// The Trace Event Format's required fields, per phase: every event has ph,
// pid and name; all but metadata a numeric ts; X a dur >= 0; slices and
// instants a tid; counters numeric args; metadata args.
void expect_trace_event_format(const json& trace) {
  ASSERT_TRUE(trace.is_object());
  ASSERT_TRUE(trace.contains("traceEvents"));
  ASSERT_TRUE(trace["traceEvents"].is_array());
  EXPECT_EQ(trace.value("displayTimeUnit", ""), "ms");
  for (const json& e : trace["traceEvents"]) {
    ASSERT_TRUE(e.is_object()) << e;
    ASSERT_TRUE(e.contains("ph") && e["ph"].is_string()) << e;
    ASSERT_TRUE(e.contains("pid") && e["pid"].is_number_integer()) << e;
    ASSERT_TRUE(e.contains("name") && e["name"].is_string()) << e;
    const std::string ph = e["ph"];
    ASSERT_TRUE(ph == "X" || ph == "i" || ph == "C" || ph == "M") << "unexpected phase " << e;
    if (ph != "M") {
      ASSERT_TRUE(e.contains("ts") && e["ts"].is_number()) << e;
    }
    if (ph == "X" || ph == "i" || ph == "M") {
      ASSERT_TRUE(e.contains("tid") || e["name"] == "process_name") << e;
    }
    if (ph == "X") {
      ASSERT_TRUE(e.contains("dur") && e["dur"].is_number()) << e;
      EXPECT_GE(e["dur"].get<double>(), 0.0) << e;
      EXPECT_TRUE(e.contains("cat")) << e;
    }
    if (ph == "i") {
      EXPECT_EQ(e.value("s", ""), "t") << e;
    }
    if (ph == "C") {
      ASSERT_TRUE(e.contains("args") && e["args"].is_object() && !e["args"].empty()) << e;
      for (const auto& [k, v] : e["args"].items()) EXPECT_TRUE(v.is_number()) << e;
    }
    if (ph == "M") {
      const char* key = e["name"] == "thread_sort_index" ? "sort_index" : "name";
      ASSERT_TRUE(e.contains("args") && e["args"].contains(key)) << e;
    }
  }
}

std::map<int, std::string> thread_names(const json& trace) {
  std::map<int, std::string> names;
  for (const json& e : trace["traceEvents"])
    if (e["ph"] == "M" && e["name"] == "thread_name")
      names[e["tid"].get<int>()] = e["args"]["name"];
  return names;
}

const json* find_event(const json& trace, const std::string& ph, const std::string& cat,
                       const std::string& name) {
  for (const json& e : trace["traceEvents"])
    if (e["ph"] == ph && e.value("cat", "") == cat && e["name"] == name) return &e;
  return nullptr;
}

TEST(ChromeTrace, SwapPlanHasOneTrackPerStreamAndExactTimes) {
  // The simulator test's swap of a: swap_out [1,3] on d2h, swap_in [6,7] on
  // h2d, free a at 3 on compute.
  ir::Graph g = tiny_graph();
  Plan plan = plan_for(g, test_util::swap_a_schedule(g));
  SimResult sim = simulate(g, plan);
  json trace = json::parse(chrome_trace(g, plan, sim).dump());
  expect_trace_event_format(trace);

  auto names = thread_names(trace);
  ASSERT_EQ(names.size(), 3u);
  EXPECT_EQ(names[1], "compute");
  EXPECT_NE(names[2].find("device->host"), std::string::npos);
  EXPECT_NE(names[3].find("host->device"), std::string::npos);

  std::map<std::string, int> by_phase;
  for (const json& e : trace["traceEvents"]) ++by_phase[e["ph"].get<std::string>()];
  EXPECT_EQ(by_phase["X"], 7);  // 5 computes, 1 swap_out, 1 swap_in
  EXPECT_EQ(by_phase["i"], 5);  // the frees

  const json* out = find_event(trace, "X", "swap_out", "a");
  ASSERT_NE(out, nullptr);
  EXPECT_EQ((*out)["tid"], 2);
  EXPECT_DOUBLE_EQ((*out)["ts"].get<double>(), 1e6);
  EXPECT_DOUBLE_EQ((*out)["dur"].get<double>(), 2e6);
  EXPECT_EQ((*out)["args"]["bytes"], 32);
  const json* in = find_event(trace, "X", "swap_in", "a");
  ASSERT_NE(in, nullptr);
  EXPECT_EQ((*in)["tid"], 3);
  EXPECT_DOUBLE_EQ((*in)["ts"].get<double>(), 6e6);
  const json* mm = find_event(trace, "X", "compute", "mm");
  ASSERT_NE(mm, nullptr);
  EXPECT_EQ((*mm)["tid"], 1);
  EXPECT_EQ((*mm)["args"]["op_type"], "MatMul");
  EXPECT_EQ((*mm)["args"]["bytes"], 32);  // allocates a
  const json* free_a = find_event(trace, "i", "free", "a");
  ASSERT_NE(free_a, nullptr);
  EXPECT_DOUBLE_EQ((*free_a)["ts"].get<double>(), 3e6);

  // The memory counter reaches the plan's peak and ends where the plan does.
  std::uint64_t high = 0, last = 0;
  double last_ts = -1;
  for (const json& e : trace["traceEvents"]) {
    if (e["ph"] != "C" || e["name"] != "device memory") continue;
    EXPECT_GE(e["ts"].get<double>(), last_ts) << "counter samples must be in time order";
    last_ts = e["ts"];
    last = e["args"]["bytes"];
    high = std::max(high, last);
  }
  EXPECT_EQ(high, sim.peak_bytes);
  EXPECT_EQ(last, 100u);
  EXPECT_EQ(trace["otherData"]["peak_bytes"], 192);
}

TEST(ChromeTrace, RecomputeIsItsOwnCategory) {
  ir::Graph g = tiny_graph();
  Plan plan = plan_for(g, test_util::recompute_a_schedule(g));
  json trace = chrome_trace(g, plan, simulate(g, plan));
  const json* re = find_event(trace, "X", "recompute", "mm");
  ASSERT_NE(re, nullptr);
  EXPECT_DOUBLE_EQ((*re)["ts"].get<double>(), 4.5e6);
  EXPECT_DOUBLE_EQ((*re)["dur"].get<double>(), 1e6);
}

TEST(MemoryTimeline, PlacesChangesInTimeNotIssueOrder) {
  // Hand-made timings: the swap_in of a is issued before neg but the h2d
  // stream only starts it at 5, after neg (which starts at 3) has allocated.
  ir::Graph g = tiny_graph();
  Plan plan = plan_for(g, {});
  plan.schedule = test_util::steps(
      g, {{"compute", "mm"}, {"free", "a"}, {"swap_in", "a"}, {"compute", "relu"}});
  SimResult sim;
  sim.steps = {{Stream::kCompute, 0, 1, 128},
               {Stream::kCompute, 2, 2, 96},
               {Stream::kH2D, 5, 6, 128},
               {Stream::kCompute, 3, 4, 160}};
  auto points = memory_timeline(g, plan, sim);
  ASSERT_EQ(points.size(), 5u);
  const std::pair<double, std::uint64_t> want[] = {{0, 96}, {0, 128}, {2, 96}, {3, 128}, {5, 160}};
  for (std::size_t i = 0; i < points.size(); ++i) {
    EXPECT_DOUBLE_EQ(points[i].seconds, want[i].first) << i;
    EXPECT_EQ(points[i].bytes, want[i].second) << i;
  }
}

TEST(MemoryTimeline, AllocatesAtStartAndReleasesAtEnd) {
  ir::Graph g = tiny_graph();
  Plan plan = plan_for(g, test_util::swap_a_schedule(g));
  auto points = memory_timeline(g, plan, simulate(g, plan));
  // One point per step that changes memory (the swap_out does not) plus
  // the start; the swap_in's +32 lands at its start, 6.
  ASSERT_EQ(points.size(), 12u);
  EXPECT_EQ(points.front().bytes, 96u);
  EXPECT_DOUBLE_EQ(points[6].seconds, 6);
  EXPECT_EQ(points[6].bytes, 160u);
  EXPECT_DOUBLE_EQ(points[7].seconds, 7);
  EXPECT_EQ(points[7].bytes, 192u);
  EXPECT_EQ(points.back().bytes, 100u);
}

TEST(ChromeTrace, UnlimitedBudgetDrawsNoBudgetCounter) {
  ir::Graph g = tiny_graph();
  Plan plan = plan_for(g, test_util::swap_a_schedule(g));
  plan.budget_bytes = UINT64_MAX;
  json trace = chrome_trace(g, plan, simulate(g, plan));
  for (const json& e : trace["traceEvents"]) EXPECT_NE(e["name"], "budget");
  EXPECT_FALSE(trace["otherData"].contains("budget_bytes"));
}

TEST(ChromeTrace, WritesAtomicallyAndReadsBack) {
  ir::Graph g = tiny_graph();
  Plan plan = plan_for(g, test_util::swap_a_schedule(g));
  SimResult sim = simulate(g, plan);
  namespace fs = std::filesystem;
  fs::path dir = fs::path(test::temp_path("trace-dir"));
  fs::create_directories(dir);
  std::string path = (dir / "out.json").string();
  { std::ofstream(path) << "old contents"; }
  write_chrome_trace(g, plan, sim, path);
  std::ifstream in(path);
  json back = json::parse(in);
  expect_trace_event_format(back);
  EXPECT_EQ(back, json::parse(chrome_trace(g, plan, sim).dump()));
  // No temporary left beside it.
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1);

  EXPECT_THROW(write_chrome_trace(g, plan, sim, (dir / "no-such-dir" / "t.json").string()),
               InputError);
}

TEST(ChromeTrace, InvalidUtf8NamesStillDump) {
  // ONNX names are bytes; a trace must still be written (and parse).
  test::ModelBuilder b;
  b.input("x\xff", {std::int64_t{2}});
  b.node("Relu", {"x\xff"}, {"y"}, "relu\xfe");
  b.output("y");
  ir::Graph g = ir::load_model(b.write("badname"), {}).graph;
  Plan plan = plan_for(g, baseline_schedule(g));
  std::string path = test::temp_path("bad.json");
  write_chrome_trace(g, plan, simulate(g, plan), path);
  std::ifstream in(path);
  json back = json::parse(in);
  EXPECT_NE(find_event(back, "X", "compute", "relu\xef\xbf\xbd"), nullptr);
}

}  // namespace
}  // namespace memplan::planner
