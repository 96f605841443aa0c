#include "report/memory_plot_svg.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
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

// Parses an SVG with a real XML parser (Python's xml.etree) and returns what
// the tests look at: every text, every <title>, and for each element with an
// id its tag, vertex count and smallest y (the highest point drawn).
constexpr const char* kInspectSvg = R"PY(
import json, sys, xml.etree.ElementTree as ET
SVG = '{http://www.w3.org/2000/svg}'
root = ET.parse(sys.argv[1]).getroot()
out = {'root': root.tag, 'texts': [''.join(t.itertext()) for t in root.iter(SVG + 'text')],
       'titles': [t.text or '' for t in root.iter(SVG + 'title')], 'ids': {}}
for el in root.iter():
    if el.get('id'):
        pts = [tuple(map(float, p.split(','))) for p in (el.get('points') or '').split()]
        out['ids'][el.get('id')] = {'tag': el.tag[len(SVG):], 'points': len(pts),
                                   'min_y': min((p[1] for p in pts), default=float(el.get('y1') or 0))}
print(json.dumps(out))
)PY";

// Writes the SVG and parses it; fails the test if the XML is not well formed.
json parse_svg(const std::string& svg) {
  std::string svg_path = test::write_temp("plot.svg", svg);
  std::string script = test::write_temp("inspect_svg.py", kInspectSvg);
  std::string out_path = test::temp_path("inspect.json");
  std::string cmd = "python3 " + script + " " + svg_path + " >" + out_path + " 2>&1";
  int rc = std::system(cmd.c_str());
  std::ifstream in(out_path);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(rc, 0) << "not well-formed XML: " << text.str();
  if (rc != 0) return json::object();
  return json::parse(text.str());
}

bool has_text(const json& doc, const std::string& needle) {
  for (const auto& t : doc["texts"])
    if (t.get<std::string>().find(needle) != std::string::npos) return true;
  return false;
}

TEST(MemoryPlotSvg, TinyPlanDrawsBaselinePlanBudgetAndTicks) {
  ir::Graph g = tiny_graph();
  Plan plan = plan_for(g, test_util::swap_a_schedule(g));
  plan.budget_bytes = 200;  // just above the 192-byte peak: drawn
  plan.decisions[*g.find_tensor("a")] = Decision::kSwap;
  SimResult sim = simulate(g, plan);
  json doc = parse_svg(memory_plot_svg(g, plan, sim));
  ASSERT_FALSE(doc.empty());
  EXPECT_EQ(doc["root"], "{http://www.w3.org/2000/svg}svg");
  ASSERT_TRUE(doc["ids"].contains("baseline"));
  ASSERT_TRUE(doc["ids"].contains("plan"));
  ASSERT_TRUE(doc["ids"].contains("budget"));
  EXPECT_EQ(doc["ids"]["plan"]["tag"], "polyline");
  // Exact step curves: two vertices per point (12 plan points, 11 baseline).
  EXPECT_EQ(doc["ids"]["plan"]["points"], 24);
  EXPECT_EQ(doc["ids"]["baseline"]["points"], 22);
  // Both curves peak at 192 B: the same height; the budget line above them.
  EXPECT_DOUBLE_EQ(doc["ids"]["plan"]["min_y"].get<double>(),
                   doc["ids"]["baseline"]["min_y"].get<double>());
  EXPECT_LT(doc["ids"]["budget"]["min_y"].get<double>(), doc["ids"]["plan"]["min_y"].get<double>());
  EXPECT_TRUE(has_text(doc, "tiny.onnx"));
  EXPECT_TRUE(has_text(doc, "time (ms)"));  // 8.5 s shown in ms
  EXPECT_TRUE(has_text(doc, "device memory in use (B)"));
  EXPECT_TRUE(has_text(doc, "budget 200 B"));
  EXPECT_TRUE(has_text(doc, "1 swapped, 0 recomputed"));
  std::set<std::string> titles;
  for (const auto& t : doc["titles"]) titles.insert(t.get<std::string>());
  EXPECT_TRUE(titles.count("swap out a"));
  EXPECT_TRUE(titles.count("swap in a"));
}

TEST(MemoryPlotSvg, NamesAreEscaped) {
  test::ModelBuilder b;
  const std::string nasty = "x<&\"'>]]>";
  b.input("in", {std::int64_t{2}, std::int64_t{4}});
  b.node("Relu", {"in"}, {nasty}, "relu");
  b.node("Neg", {nasty}, {"n"}, "neg");
  b.node("Mul", {"n", nasty}, {"y"}, "mul");
  b.output("y");
  ir::Graph g = ir::load_model(b.write("nasty"), {}).graph;
  Plan plan = plan_for(g, test_util::steps(g, {{"compute", "relu"},
                                               {"swap_out", nasty.c_str()},
                                               {"compute", "neg"},
                                               {"free", nasty.c_str()},
                                               {"swap_in", nasty.c_str()},
                                               {"compute", "mul"},
                                               {"free", "n"},
                                               {"free", nasty.c_str()}}));
  plan.model_path = "dir/a&b<c>.onnx";
  MemoryPlotOptions options;
  options.title = "what if <swap> & \"keep\" \x01";
  json doc = parse_svg(memory_plot_svg(g, plan, simulate(g, plan), options));
  ASSERT_FALSE(doc.empty());
  EXPECT_EQ(doc["texts"][0], "what if <swap> & \"keep\" ?");
  bool found = false;
  for (const auto& t : doc["titles"]) found |= t == "swap out " + nasty;
  EXPECT_TRUE(found) << doc["titles"];
}

TEST(MemoryPlotSvg, FarBudgetIsNamedNotDrawnAndNoBudgetIsNeither) {
  ir::Graph g = tiny_graph();
  Plan plan = plan_for(g, test_util::swap_a_schedule(g));  // budget 1 MiB
  SimResult sim = simulate(g, plan);
  json doc = parse_svg(memory_plot_svg(g, plan, sim));
  EXPECT_FALSE(doc["ids"].contains("budget"));
  EXPECT_TRUE(has_text(doc, "budget 1.00 MiB (above the plot)"));
  plan.budget_bytes = UINT64_MAX;
  doc = parse_svg(memory_plot_svg(g, plan, sim));
  EXPECT_FALSE(doc["ids"].contains("budget"));
  EXPECT_FALSE(has_text(doc, "budget"));
}

TEST(MemoryPlotSvg, DownsamplingKeepsThePeak) {
  ir::Graph g = tiny_graph();
  Plan plan = plan_for(g, test_util::swap_a_schedule(g));
  SimResult sim = simulate(g, plan);
  json exact = parse_svg(memory_plot_svg(g, plan, sim));
  MemoryPlotOptions few;
  few.max_points = 6;
  json cut = parse_svg(memory_plot_svg(g, plan, sim, few));
  EXPECT_LE(cut["ids"]["plan"]["points"].get<int>(), 6);
  EXPECT_LE(cut["ids"]["baseline"]["points"].get<int>(), 6);
  EXPECT_DOUBLE_EQ(cut["ids"]["plan"]["min_y"].get<double>(),
                   exact["ids"]["plan"]["min_y"].get<double>());
  EXPECT_DOUBLE_EQ(cut["ids"]["baseline"]["min_y"].get<double>(),
                   exact["ids"]["baseline"]["min_y"].get<double>());
}

TEST(StepVertices, ExactWhenSmall) {
  std::vector<MemoryPoint> curve = {{0, 10}, {1, 30}, {2, 20}};
  auto v = step_vertices(curve, 5, 4000);
  std::vector<std::pair<double, std::uint64_t>> got;
  for (const auto& p : v) got.emplace_back(p.seconds, p.bytes);
  EXPECT_EQ(got, (std::vector<std::pair<double, std::uint64_t>>{
                     {0, 10}, {1, 10}, {1, 30}, {2, 30}, {2, 20}, {5, 20}}));
}

TEST(StepVertices, BucketsKeepTheMaximumOfNarrowSpikes) {
  // 100k points of 1 KiB with one spike of zero width in the middle.
  std::vector<MemoryPoint> curve;
  for (int i = 0; i < 100000; ++i) curve.push_back({i * 1e-3, 1024});
  curve.insert(curve.begin() + 50001, MemoryPoint{50.0, 1 << 30});
  auto v = step_vertices(curve, 100, 4000);
  EXPECT_LE(v.size(), 4000u);
  std::uint64_t high = 0;
  for (const auto& p : v) high = std::max(high, p.bytes);
  EXPECT_EQ(high, 1u << 30);
  // Time still spans the whole curve and only moves forward.
  EXPECT_DOUBLE_EQ(v.front().seconds, 0);
  EXPECT_DOUBLE_EQ(v.back().seconds, 100);
  for (std::size_t i = 1; i < v.size(); ++i) EXPECT_GE(v[i].seconds, v[i - 1].seconds);
}

TEST(BaselineTimeline, HandComputed) {
  // tiny_plan.h: 96 B at the start; mm [0,1] +a; relu [1,1.5] +b; neg
  // [1.5,4.5] +c, free b; mul [4.5,5.5] +d, free a c; sum [5.5,6] +loss,
  // free d.
  ir::Graph g = tiny_graph();
  Plan plan = plan_for(g, {});
  auto points = baseline_timeline(g, plan.node_seconds);
  std::vector<std::pair<double, std::uint64_t>> got;
  for (const auto& p : points) got.emplace_back(p.seconds, p.bytes);
  EXPECT_EQ(got, (std::vector<std::pair<double, std::uint64_t>>{{0, 96},
                                                                {0, 128},
                                                                {1, 128},
                                                                {1, 160},
                                                                {1.5, 160},
                                                                {1.5, 192},
                                                                {4.5, 160},
                                                                {4.5, 192},
                                                                {5.5, 128},
                                                                {5.5, 132},
                                                                {6, 100}}));
}

TEST(XmlEscape, MarkupControlAndBadUtf8) {
  EXPECT_EQ(xml_escape("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&apos;");
  EXPECT_EQ(xml_escape("tab\tok\x01\x7f"), "tab\tok??");
  EXPECT_EQ(xml_escape("\xC2\xB5s"), "\xC2\xB5s");  // valid UTF-8 kept
  EXPECT_EQ(xml_escape("\xff\xC2"), "??");          // stray bytes replaced
  EXPECT_EQ(xml_escape("\xE2\x82"), "??");          // truncated sequence
}

TEST(MemoryPlotSvg, WritesAtomically) {
  ir::Graph g = tiny_graph();
  Plan plan = plan_for(g, test_util::swap_a_schedule(g));
  SimResult sim = simulate(g, plan);
  std::string path = test::temp_path("plot.svg");
  write_memory_plot_svg(g, plan, sim, path);
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), memory_plot_svg(g, plan, sim));
  EXPECT_THROW(write_memory_plot_svg(g, plan, sim, path + ".missing-dir/x.svg"), InputError);
}

}  // namespace
}  // namespace memplan::planner
