#pragma once
// Helpers for the scheduler tests: graphs by hand, costs, schedules as text,
// an independent residency replay and a full validate() of a result.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "ir/baseline_memory.h"
#include "ir/costs.h"
#include "ir/device_presets.h"
#include "ir/graph.h"
#include "ir/liveness.h"
#include "ir/node_costs.h"
#include "ir/onnx_loader.h"
#include "planner/baseline_plan.h"
#include "planner/plan.h"
#include "planner/plan_assembly.h"
#include "planner/plan_validator.h"
#include "planner/scheduler.h"
#include "support/model_builder.h"

namespace memplan::planner::sched_test {

inline ir::Graph load(const test::ModelBuilder& b, const std::string& stem,
                      std::map<std::string, std::int64_t> dims = {{"batch", 2}}) {
  ir::LoadOptions o;
  o.dims = std::move(dims);
  return ir::load_model(b.write(stem), o).graph;
}

// Every node takes `seconds`; copies are fast enough to be near free.
inline ir::NodeCosts unit_costs(const ir::Graph& g, double seconds = 1.0,
                                double bytes_per_s = 1e12) {
  ir::NodeCosts c;
  c.seconds.assign(g.nodes().size(), seconds);
  c.device.name = "test-gpu";
  c.device.memory_bytes = 1ull << 40;
  c.device.h2d_bytes_per_s = bytes_per_s;
  c.device.d2h_bytes_per_s = bytes_per_s;
  return c;
}

// "compute f0", "free a": a schedule readable in test failures.
inline std::vector<std::string> text(const ir::Graph& g, const std::vector<Step>& schedule) {
  std::vector<std::string> out;
  out.reserve(schedule.size());
  for (const Step& s : schedule)
    out.push_back(std::string(to_string(s.op)) + " " +
                  (s.on_node() ? g.node(s.id).name : g.tensor(s.id).name));
  return out;
}

inline std::vector<Decision> decide(const ir::Graph& g,
                                    std::initializer_list<std::pair<const char*, Decision>> list) {
  std::vector<Decision> d(g.tensors().size(), Decision::kKeep);
  for (const auto& [name, decision] : list) {
    auto id = g.find_tensor(name);
    EXPECT_TRUE(id.has_value()) << name;
    if (id) d[*id] = decision;
  }
  return d;
}

inline Decision applied(const ir::Graph& g, const ScheduleResult& r, const char* name) {
  return r.applied.at(*g.find_tensor(name));
}

// An independent replay of PLAN_FORMAT's step rules, written apart from the
// validator so the two cross-check. Returns the first broken rule or "".
inline std::string replay(const ir::Graph& g, const std::vector<Step>& schedule,
                          std::uint64_t* peak_out = nullptr) {
  const auto& ts = g.tensors();
  std::vector<char> resident(ts.size()), host(ts.size()), computed(g.nodes().size());
  std::uint64_t in_use = 0;
  for (ir::TensorId t = 0; t < ts.size(); ++t)
    if (ts[t].initially_resident()) resident[t] = 1, in_use += ts[t].bytes;
  std::uint64_t peak = in_use;
  for (std::size_t i = 0; i < schedule.size(); ++i) {
    const Step& s = schedule[i];
    const std::string at = "step " + std::to_string(i) + ": ";
    if (s.on_node()) {
      const ir::Node& n = g.node(s.id);
      if (s.op == StepOp::kCompute && computed[s.id]) return at + "computed twice";
      if (s.op == StepOp::kRecompute && (!computed[s.id] || !n.reproducible()))
        return at + "bad recompute " + n.name;
      if (s.op == StepOp::kRecompute && n.dropout_mask() != ir::kNoTensor &&
          !resident[n.dropout_mask()])
        return at + "Dropout " + n.name + " recomputed without its mask";
      for (ir::TensorId in : n.inputs)
        if (!resident[in]) return at + "input " + ts[in].name + " not resident";
      for (ir::TensorId out : n.outputs) {
        if (resident[out] && s.op == StepOp::kCompute) return at + "output already resident";
        if (!resident[out]) resident[out] = 1, in_use += ts[out].bytes;
      }
      computed[s.id] = 1;
    } else if (s.op == StepOp::kSwapOut) {
      if (!resident[s.id]) return at + "swap_out of absent " + ts[s.id].name;
      host[s.id] = 1;
    } else if (s.op == StepOp::kSwapIn) {
      if (resident[s.id] || !host[s.id]) return at + "bad swap_in " + ts[s.id].name;
      resident[s.id] = 1;
      in_use += ts[s.id].bytes;
    } else {
      if (!resident[s.id]) return at + "free of absent " + ts[s.id].name;
      // A graph input may be freed (swapped training state): only once it
      // has a host copy, since this scheduler never drops state.
      if (ts[s.id].initially_resident() && !host[s.id])
        return at + "free of graph input " + ts[s.id].name + " without a host copy";
      resident[s.id] = 0;
      in_use -= ts[s.id].bytes;
    }
    peak = std::max(peak, in_use);
  }
  for (ir::NodeId n = 0; n < g.nodes().size(); ++n)
    if (!computed[n]) return "node " + g.node(n).name + " never computed";
  for (ir::TensorId t = 0; t < ts.size(); ++t)
    if (ts[t].is_graph_output && !resident[t]) return "output " + ts[t].name + " not resident";
  if (peak_out != nullptr) *peak_out = peak;
  return {};
}

// A whole plan around a schedule some planner made, with the graph's sizes
// and the costs' times, `predicted` filled in from the rules. A schedule
// that does not fit states its own peak as the budget, so validate() still
// checks every other rule.
inline Plan whole_plan(const ir::Graph& g, const ir::NodeCosts& costs, std::vector<Step> schedule,
                       std::vector<Decision> decisions, bool fits, std::uint64_t peak_bytes,
                       std::uint64_t budget) {
  PlanHeader header{"test.onnx", std::string(64, '0'), fits ? budget : peak_bytes, {}};
  return assemble_plan(g, costs, std::move(header), std::move(schedule), std::move(decisions));
}

// The scheduler's result as a whole plan, checked by planner::validate.
inline Validation validate_result(const ir::Graph& g, const ir::NodeCosts& costs,
                                  const ScheduleResult& r, std::uint64_t budget) {
  return validate(g, whole_plan(g, costs, r.schedule, r.applied, r.fits, r.peak_bytes, budget));
}

// The committed training graphs, sorted, loaded at batch 2 and seq 64 with
// a100-40gb roofline costs: small enough for property tests over all.
struct SmallFixture {
  std::string name;
  ir::Graph graph;
  ir::NodeCosts costs;
  std::uint64_t baseline_peak = 0;
};

// The schedule replays without a broken rule, at the peak it reports, and
// validate() accepts it.
inline void expect_valid(const ir::Graph& g, const ir::NodeCosts& costs, const ScheduleResult& r,
                         std::uint64_t budget) {
  std::uint64_t peak = 0;
  EXPECT_EQ(replay(g, r.schedule, &peak), "");
  EXPECT_EQ(peak, r.peak_bytes);
  Validation v = validate_result(g, costs, r, budget);
  EXPECT_TRUE(v.valid) << v.message;
  EXPECT_EQ(v.peak_bytes, r.peak_bytes);
}

inline std::vector<std::filesystem::path> fixture_files() {
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(MEMPLAN_FIXTURES))
    if (e.path().string().ends_with(".training.onnx")) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

inline SmallFixture load_small_fixture(const std::filesystem::path& file) {
  SmallFixture f;
  f.name = file.filename().string();
  ir::LoadOptions lo;
  lo.dims = {{"batch", 2}, {"seq", 64}};
  f.graph = ir::load_model(file.string(), lo).graph;
  std::vector<std::string> warnings;
  f.costs = ir::make_node_costs(f.graph, ir::device_preset("a100-40gb"), {}, "roofline a100-40gb",
                                warnings);
  f.baseline_peak = ir::baseline_memory(f.graph, ir::Liveness(f.graph)).peak_bytes;
  return f;
}

}  // namespace memplan::planner::sched_test
