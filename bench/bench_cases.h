#pragma once
// The graphs the Google Benchmark targets run on: every fixture
// (tests/fixtures/*.training.onnx at batch=8 seq=512) and the synthetic
// graphs of 1k, 10k and 100k nodes. Each case is loaded once and its
// intermediate results (baseline, problem, decisions, plan) are kept, so
// every benchmark times one stage on the output of the stages before it.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ir/costs.h"
#include "ir/onnx_loader.h"
#include "planner/plan.h"
#include "planner/planning_order.h"
#include "solvers/problem.h"
#include "solvers/solver.h"

namespace memplan::bench {

struct CaseSpec {
  std::string name;                 // "gpt2_xl", "synth10k"
  std::string path;                 // the .onnx file (synthetic ones are written to a temp dir)
  std::size_t synthetic_nodes = 0;  // 0: a fixture
};

// Settings shared by every case.
struct BenchSettings {
  std::string device = "a100-40gb";
  double budget_fraction = 0.7;  // of the baseline peak, for fixtures (all but the MLPs reach it)
  double synth_budget_fraction = 0.5;  // for the synthetic graphs
  double ilp_time_limit = 2;           // seconds
  ir::LoadOptions load;                // dims
};

struct Case {
  CaseSpec spec;
  ir::LoadedModel model;
  ir::NodeCosts costs;
  std::uint64_t baseline_peak = 0;
  std::uint64_t budget = 0;
  // search_plan solves and schedules in the planning order (shape reads and
  // freeing backward nodes hoisted); the stages below see what it sees.
  planner::PlanningGraph planning;
  solvers::Problem problem;                  // on planning.graph
  solvers::Solution greedy;                  // model-only greedy (no simulator hook)
  std::vector<solvers::Decision> decisions;  // greedy's, by TensorId (same ids in both orders)
  planner::Plan plan;                        // greedy's plan through search_plan, graph order
};

// Fixtures found in `fixtures_dir`, then synth1k/10k/100k; `only` (comma
// list of names, empty: all) filters. Synthetic files go to `synth_dir`.
std::vector<CaseSpec> discover_cases(const std::string& fixtures_dir, const std::string& synth_dir,
                                     const std::string& only);

// Loads and prepares a case once; later calls return the same object.
Case& prepared_case(const CaseSpec& spec, const BenchSettings& settings);

// output_bench.cc: plan.json and, where passes/ is built, the rewrite.
// `settings` must outlive the benchmarks.
void register_output_stages(const std::vector<CaseSpec>& cases, const BenchSettings& settings);

}  // namespace memplan::bench
