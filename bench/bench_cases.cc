#include "bench/bench_cases.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "bench/synthetic_graph.h"
#include "ir/baseline_memory.h"
#include "ir/device_presets.h"
#include "ir/liveness.h"
#include "ir/node_costs.h"
#include "planner/plan_search.h"
#include "solvers/greedy_solver.h"
#include "solvers/problem_builder.h"

namespace memplan::bench {
namespace {

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

constexpr std::uint64_t kSynthSeed = 1;

}  // namespace

std::vector<CaseSpec> discover_cases(const std::string& fixtures_dir, const std::string& synth_dir,
                                     const std::string& only) {
  const std::string suffix = ".training.onnx";
  std::vector<CaseSpec> out;
  if (std::filesystem::is_directory(fixtures_dir)) {
    for (const auto& e : std::filesystem::directory_iterator(fixtures_dir)) {
      const std::string file = e.path().filename().string();
      if (file.size() <= suffix.size() || !file.ends_with(suffix)) continue;
      out.push_back({file.substr(0, file.size() - suffix.size()), e.path().string(), 0});
    }
  }
  // Smallest first, so a run's output reads as a growth curve.
  std::ranges::sort(out, [](const CaseSpec& a, const CaseSpec& b) {
    return std::filesystem::file_size(a.path) < std::filesystem::file_size(b.path);
  });
  for (std::size_t n : {1000u, 10000u, 100000u}) {
    std::string name = "synth" + std::to_string(n / 1000) + "k";
    out.push_back({name, synth_dir + "/" + name + ".onnx", n});
  }
  const auto wanted = split_list(only);
  if (wanted.empty()) return out;
  std::erase_if(
      out, [&](const CaseSpec& c) { return std::ranges::find(wanted, c.name) == wanted.end(); });
  return out;
}

Case& prepared_case(const CaseSpec& spec, const BenchSettings& settings) {
  static std::map<std::string, std::unique_ptr<Case>> cache;
  auto& slot = cache[spec.name];
  if (slot) return *slot;
  auto c = std::make_unique<Case>();
  c->spec = spec;
  if (spec.synthetic_nodes != 0 && !std::filesystem::exists(spec.path)) {
    SyntheticOptions o;
    o.target_nodes = spec.synthetic_nodes;
    o.seed = kSynthSeed;
    std::filesystem::create_directories(std::filesystem::path(spec.path).parent_path());
    std::ofstream f(spec.path, std::ios::binary | std::ios::trunc);
    make_synthetic_model(o).proto.SerializeToOstream(&f);
  }
  c->model = ir::load_model(spec.path, settings.load);
  const ir::Graph& g = c->model.graph;
  const auto& device = ir::device_preset(settings.device);
  std::vector<std::string> warnings;
  // Synthetic graphs carry jittered times as a profile would; fixtures use
  // the roofline, as `memplan plan --device` does.
  std::map<std::string, double> measured;
  if (spec.synthetic_nodes != 0) measured = synthetic_node_seconds(g, device, kSynthSeed);
  c->costs = ir::make_node_costs(
      g, device, measured, measured.empty() ? "roofline " + device.name : "synthetic", warnings);
  c->baseline_peak = ir::baseline_memory(g, ir::Liveness(g)).peak_bytes;
  const double fraction =
      spec.synthetic_nodes != 0 ? settings.synth_budget_fraction : settings.budget_fraction;
  c->budget = static_cast<std::uint64_t>(fraction * static_cast<double>(c->baseline_peak));
  c->planning = planner::planning_graph(g, c->costs);
  const ir::Graph& pg = c->planning.graph;
  c->problem = solvers::build_problem(pg, c->planning.costs, c->budget, {});
  c->greedy = solvers::GreedySolver().solve(c->problem, {});
  c->decisions = planner::decisions_by_tensor(pg, c->problem, c->greedy.choice);
  planner::PlanRequest req;
  req.budget_bytes = c->budget;
  req.solver = "greedy";
  // The rewrite and the timings of earlier releases: state stays resident.
  req.state_on_host = planner::PlanRequest::StateOnHost::kNever;
  req.model_path = spec.path;
  req.model_sha256 = c->model.sha256;
  c->plan = planner::search_plan(g, c->costs, req).plan;
  slot = std::move(c);
  return *slot;
}

}  // namespace memplan::bench
