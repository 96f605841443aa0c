// Google Benchmark targets for the planner's stages, one benchmark per
// stage × graph: load, analysis (liveness + baseline), costs, the planning
// order, problem build, greedy, ILP, scheduling, simulation, validation, and
// the whole greedy plan search. Names read "<stage>/<graph>", so a filter like
// --benchmark_filter='greedy/' shows how one stage grows with size. Also the
// ILP's time-limit overshoot on the synthetic graphs: ilp_limit/<graph>/limit_s:N.
// plan.json and the rewrite are in output_bench.cc.
//
//   memplan_bench [--cases=mlp,synth10k] [--fixtures=DIR] [--synth-dir=DIR]
//                 [--ilp-time-limit=2] [--device=a100-40gb] [--budget=0.7]
//                 [--synth-budget=0.5] [benchmark flags]
// Budgets are fractions of each graph's baseline peak.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "bench/bench_cases.h"
#include "ir/baseline_memory.h"
#include "ir/device_presets.h"
#include "ir/liveness.h"
#include "ir/node_costs.h"
#include "planner/plan_search.h"
#include "planner/plan_validator.h"
#include "planner/planning_order.h"
#include "planner/scheduler.h"
#include "planner/simulator.h"
#include "solvers/greedy_solver.h"
#include "solvers/ilp_solver.h"
#include "solvers/problem_builder.h"

#ifndef MEMPLAN_FIXTURES
#define MEMPLAN_FIXTURES "tests/fixtures"
#endif

namespace memplan::bench {
namespace {

BenchSettings g_settings;

void size_counters(benchmark::State& state, const Case& c) {
  state.counters["nodes"] = static_cast<double>(c.model.graph.nodes().size());
  state.counters["tensors"] = static_cast<double>(c.model.graph.tensors().size());
  state.counters["candidates"] = static_cast<double>(c.problem.candidates.size());
}

void bm_load(benchmark::State& state, const CaseSpec& spec) {
  Case& c = prepared_case(spec, g_settings);
  for (auto _ : state) {
    ir::LoadedModel m = ir::load_model(spec.path, g_settings.load);
    benchmark::DoNotOptimize(m.graph.nodes().data());
  }
  size_counters(state, c);
}

void bm_analysis(benchmark::State& state, const CaseSpec& spec) {
  Case& c = prepared_case(spec, g_settings);
  for (auto _ : state) {
    ir::Liveness live(c.model.graph);
    ir::BaselineMemory base = ir::baseline_memory(c.model.graph, live);
    benchmark::DoNotOptimize(base.peak_bytes);
  }
  size_counters(state, c);
}

void bm_costs(benchmark::State& state, const CaseSpec& spec) {
  Case& c = prepared_case(spec, g_settings);
  const auto& device = ir::device_preset(g_settings.device);
  for (auto _ : state) {
    std::vector<std::string> warnings;
    ir::NodeCosts costs = ir::make_node_costs(c.model.graph, device, {}, "roofline", warnings);
    benchmark::DoNotOptimize(costs.seconds.data());
  }
  size_counters(state, c);
}

void bm_planning_order(benchmark::State& state, const CaseSpec& spec) {
  Case& c = prepared_case(spec, g_settings);
  for (auto _ : state) {
    planner::PlanningGraph pg = planner::planning_graph(c.model.graph, c.costs);
    benchmark::DoNotOptimize(pg.original.data());
  }
  size_counters(state, c);
  state.counters["hoisted"] = static_cast<double>(c.planning.hoisted);
}

void bm_problem(benchmark::State& state, const CaseSpec& spec) {
  Case& c = prepared_case(spec, g_settings);
  for (auto _ : state) {
    solvers::Problem p = solvers::build_problem(c.planning.graph, c.planning.costs, c.budget, {});
    benchmark::DoNotOptimize(p.candidates.data());
  }
  size_counters(state, c);
}

void bm_greedy(benchmark::State& state, const CaseSpec& spec) {
  Case& c = prepared_case(spec, g_settings);
  solvers::GreedySolver greedy;
  solvers::Solution s;
  for (auto _ : state) {
    s = greedy.solve(c.problem, {});
    benchmark::DoNotOptimize(s.choice.data());
  }
  size_counters(state, c);
  state.counters["overhead_model_pct"] = 100.0 * s.objective_seconds / c.problem.baseline_seconds;
  // The slope over synth1k/10k/100k at a glance: a flat rate is linear
  // growth, one falling by log 10 per decade is C log C (issue 17).
  state.counters["candidates_per_s"] =
      benchmark::Counter(static_cast<double>(c.problem.candidates.size()),
                         benchmark::Counter::kIsIterationInvariantRate);
}

// One solve per run: Cbc stops at the time limit, and the counters say
// whether it proved optimality and with what gap.
void bm_ilp(benchmark::State& state, const CaseSpec& spec) {
  Case& c = prepared_case(spec, g_settings);
  solvers::IlpSolver ilp;
  solvers::SolverOptions o;
  o.time_limit_seconds = g_settings.ilp_time_limit;
  o.warm_start = c.greedy.choice;  // as `memplan plan --solver auto` does
  solvers::Solution s;
  for (auto _ : state) {
    s = ilp.solve(c.problem, o);
    benchmark::DoNotOptimize(s.choice.data());
  }
  size_counters(state, c);
  state.counters["optimal"] = s.status == solvers::SolveStatus::kOptimal ? 1 : 0;
  double gap = 0;
  if (s.bound_seconds && s.objective_seconds > 0)
    gap = 100.0 * (s.objective_seconds - *s.bound_seconds) / s.objective_seconds;
  state.counters["gap_pct"] = gap;
  state.counters["overhead_model_pct"] = 100.0 * s.objective_seconds / c.problem.baseline_seconds;
  // The solver's own clock, coarsening and model loading included.
  state.counters["overshoot_s"] = s.solve_seconds - o.time_limit_seconds;
  state.SetLabel(std::string(to_string(s.status)));
}

// How far past its time limit the ILP returns (issue #8): one solve per
// limit, warm-started as `plan --solver auto` does. overshoot_s is the
// solver's wall time minus the limit (negative: it finished early).
void bm_ilp_limit(benchmark::State& state, const CaseSpec& spec) {
  Case& c = prepared_case(spec, g_settings);
  solvers::IlpSolver ilp;
  solvers::SolverOptions o;
  o.time_limit_seconds = static_cast<double>(state.range(0));
  o.warm_start = c.greedy.choice;
  solvers::Solution s;
  for (auto _ : state) {
    s = ilp.solve(c.problem, o);
    benchmark::DoNotOptimize(s.choice.data());
  }
  size_counters(state, c);
  state.counters["limit_s"] = o.time_limit_seconds;
  state.counters["solve_s"] = s.solve_seconds;
  state.counters["overshoot_s"] = s.solve_seconds - o.time_limit_seconds;
  state.SetLabel(std::string(to_string(s.status)));
}

void bm_schedule(benchmark::State& state, const CaseSpec& spec) {
  Case& c = prepared_case(spec, g_settings);
  planner::ScheduleOptions o;
  o.budget_bytes = c.budget;
  for (auto _ : state) {
    planner::ScheduleResult r =
        planner::make_schedule(c.planning.graph, c.planning.costs, c.decisions, o);
    benchmark::DoNotOptimize(r.schedule.data());
  }
  size_counters(state, c);
  state.counters["steps"] = static_cast<double>(c.plan.schedule.size());
}

void bm_simulate(benchmark::State& state, const CaseSpec& spec) {
  Case& c = prepared_case(spec, g_settings);
  for (auto _ : state) {
    planner::SimResult r = planner::simulate(c.model.graph, c.plan);
    benchmark::DoNotOptimize(r.iteration_seconds);
  }
  size_counters(state, c);
  state.counters["steps"] = static_cast<double>(c.plan.schedule.size());
}

void bm_validate(benchmark::State& state, const CaseSpec& spec) {
  Case& c = prepared_case(spec, g_settings);
  planner::Plan p = c.plan;
  // The budget aside (a plan over it is still checked rule by rule).
  p.budget_bytes = std::max(p.budget_bytes, p.predicted.peak_bytes);
  for (auto _ : state) {
    planner::Validation v = planner::validate(c.model.graph, p);
    benchmark::DoNotOptimize(v.valid);
  }
  size_counters(state, c);
  state.counters["steps"] = static_cast<double>(c.plan.schedule.size());
}

// What `memplan plan --solver greedy` does after loading: problem, greedy
// with simulator-judged moves, schedule, budget tightening, validation.
void bm_plan_greedy(benchmark::State& state, const CaseSpec& spec) {
  Case& c = prepared_case(spec, g_settings);
  planner::PlanRequest req;
  req.budget_bytes = c.budget;
  req.solver = "greedy";
  // The rewrite and the timings of earlier releases: state stays resident.
  req.state_on_host = planner::PlanRequest::StateOnHost::kNever;
  planner::PlanOutcome out;
  for (auto _ : state) {
    out = planner::search_plan(c.model.graph, c.costs, req);
    benchmark::DoNotOptimize(out.fits);
  }
  size_counters(state, c);
  state.counters["fits"] = out.fits ? 1 : 0;
  state.counters["overhead_pct"] =
      100.0 *
      (out.plan.predicted.iteration_seconds / out.plan.predicted.baseline_iteration_seconds - 1);
}

using Stage = void (*)(benchmark::State&, const CaseSpec&);

void register_all(const std::vector<CaseSpec>& cases) {
  const std::vector<std::pair<const char*, Stage>> stages = {
      {"load", bm_load},
      {"analysis", bm_analysis},
      {"costs", bm_costs},
      {"planning_order", bm_planning_order},
      {"problem", bm_problem},
      {"greedy", bm_greedy},
      {"ilp", bm_ilp},
      {"schedule", bm_schedule},
      {"simulate", bm_simulate},
      {"validate", bm_validate},
      {"plan_greedy", bm_plan_greedy},
  };
  for (const auto& [stage, fn] : stages) {
    for (const auto& spec : cases) {
      auto* b = benchmark::RegisterBenchmark((std::string(stage) + "/" + spec.name).c_str(),
                                             [fn = fn, spec](benchmark::State& s) { fn(s, spec); });
      b->Unit(benchmark::kMillisecond)->UseRealTime();
      // The ILP runs to its time limit; repeating it only costs time.
      if (std::strcmp(stage, "ilp") == 0) b->Iterations(1);
    }
  }
  // The time-limit overshoot on the synthetic graphs, the large ones.
  for (const auto& spec : cases) {
    if (spec.synthetic_nodes == 0) continue;
    auto* b = benchmark::RegisterBenchmark(("ilp_limit/" + spec.name).c_str(),
                                           [spec](benchmark::State& s) { bm_ilp_limit(s, spec); });
    b->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(1)->ArgName("limit_s");
    for (int limit : {1, 2, 5}) b->Arg(limit);
  }
}

// "--name=value" for our own flags; everything else goes to the library.
bool take_flag(const char* arg, const char* name, std::string& value) {
  const std::size_t n = std::strlen(name);
  if (std::strncmp(arg, name, n) != 0 || arg[n] != '=') return false;
  value = arg + n + 1;
  return true;
}

}  // namespace
}  // namespace memplan::bench

int main(int argc, char** argv) {
  using namespace memplan::bench;
  std::string cases, fixtures = MEMPLAN_FIXTURES, ilp_limit, device, budget, synth_budget;
  std::string synth_dir = (std::filesystem::temp_directory_path() / "memplan-bench-synth").string();
  std::vector<char*> rest{argv[0]};
  for (int i = 1; i < argc; ++i) {
    if (take_flag(argv[i], "--cases", cases) || take_flag(argv[i], "--fixtures", fixtures) ||
        take_flag(argv[i], "--synth-dir", synth_dir) ||
        take_flag(argv[i], "--ilp-time-limit", ilp_limit) ||
        take_flag(argv[i], "--device", device) || take_flag(argv[i], "--budget", budget) ||
        take_flag(argv[i], "--synth-budget", synth_budget))
      continue;
    rest.push_back(argv[i]);
  }
  if (!ilp_limit.empty()) g_settings.ilp_time_limit = std::stod(ilp_limit);
  if (!device.empty()) g_settings.device = device;
  if (!budget.empty()) g_settings.budget_fraction = std::stod(budget);
  if (!synth_budget.empty()) g_settings.synth_budget_fraction = std::stod(synth_budget);
  g_settings.load.dims = {{"batch", 8}, {"seq", 512}};
  const auto specs = discover_cases(fixtures, synth_dir, cases);
  if (specs.empty()) {
    std::fprintf(stderr, "memplan_bench: no cases (fixtures in %s, --cases=%s)\n", fixtures.c_str(),
                 cases.c_str());
    return 1;
  }
  register_all(specs);
  register_output_stages(specs, g_settings);
  int rest_argc = static_cast<int>(rest.size());
  benchmark::Initialize(&rest_argc, rest.data());
  if (benchmark::ReportUnrecognizedArguments(rest_argc, rest.data())) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
