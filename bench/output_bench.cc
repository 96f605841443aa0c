// Benchmarks of what `memplan plan` writes after planning: plan.json
// (serialised in memory, so the disk does not enter the figure) and, where
// passes/ is built, the rewritten ONNX model.
#include <benchmark/benchmark.h>

#include <string>

#include "bench/bench_cases.h"
#include "planner/plan_json.h"
#ifdef MEMPLAN_BENCH_HAVE_PASSES
#include "passes/rewrite_model.h"
#endif

namespace memplan::bench {
namespace {

void size_counters(benchmark::State& state, const Case& c) {
  state.counters["nodes"] = static_cast<double>(c.model.graph.nodes().size());
  state.counters["steps"] = static_cast<double>(c.plan.schedule.size());
}

void bm_plan_json(benchmark::State& state, const CaseSpec& spec, const BenchSettings& settings) {
  Case& c = prepared_case(spec, settings);
  std::size_t bytes = 0;
  for (auto _ : state) {
    std::string text = planner::plan_to_json(c.model.graph, c.plan).dump(1);
    bytes = text.size();
    benchmark::DoNotOptimize(text.data());
  }
  size_counters(state, c);
  state.counters["json_bytes"] = static_cast<double>(bytes);
}

#ifdef MEMPLAN_BENCH_HAVE_PASSES
void bm_rewrite(benchmark::State& state, const CaseSpec& spec, const BenchSettings& settings) {
  Case& c = prepared_case(spec, settings);
  int nodes_out = 0;
  for (auto _ : state) {
    onnx::ModelProto m = passes::rewrite_model(c.model.proto, c.model.graph, c.plan, {});
    nodes_out = m.graph().node_size();
    benchmark::DoNotOptimize(m.graph().node_size());
  }
  size_counters(state, c);
  state.counters["nodes_out"] = nodes_out;
}
#endif

}  // namespace

void register_output_stages(const std::vector<CaseSpec>& cases, const BenchSettings& settings) {
  using Fn = void (*)(benchmark::State&, const CaseSpec&, const BenchSettings&);
  std::vector<std::pair<const char*, Fn>> stages = {{"plan_json", bm_plan_json}};
#ifdef MEMPLAN_BENCH_HAVE_PASSES
  stages.emplace_back("rewrite", bm_rewrite);
#endif
  for (const auto& [stage, fn] : stages) {
    for (const auto& spec : cases) {
      benchmark::RegisterBenchmark(
          (std::string(stage) + "/" + spec.name).c_str(),
          [fn = fn, spec, &settings](benchmark::State& s) { fn(s, spec, settings); })
          ->Unit(benchmark::kMillisecond)
          ->UseRealTime();
    }
  }
}

}  // namespace memplan::bench
