#pragma once
// Fixtures and plans for the runtime tests: a fixture at small dims (the
// largest host arena, gpt2_small's, is ~1.4 GiB: its parameters and
// gradients), planned at half its baseline peak or the nearest budget above
// it that memplan can reach.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ir/baseline_memory.h"
#include "ir/device_presets.h"
#include "ir/liveness.h"
#include "ir/node_costs.h"
#include "ir/onnx_loader.h"
#include "planner/layout_fit.h"
#include "planner/memory_layout.h"
#include "planner/plan_search.h"
#include "planner/reachable_floor.h"
#include "runtime-stub/executor.h"
#include "runtime-stub/host_backend.h"

namespace memplan::runtime::test_util {

// Tests run the host backend with a tiny time scale: the busy loops all but
// vanish, every check and copy still happens.
constexpr double kTinyScale = 1e-3;

inline RunReport run_host(const ir::Graph& g, const planner::Plan& plan,
                          const planner::MemoryLayout& layout) {
  HostBackend backend;
  RunOptions o;
  o.time_scale = kTinyScale;
  return run_plan(g, plan, layout, backend, o);
}

inline RunReport run_host(const ir::Graph& g, const planner::Plan& plan) {
  return run_host(g, plan, planner::compute_memory_layout(g, plan));
}

// The op of a built program that runs schedule step `step`; nullptr if none.
inline const Op* op_for_step(const Program& p, std::uint32_t step) {
  for (const auto& ops : p.streams)
    for (const Op& op : ops)
      if (op.step == step) return &op;
  return nullptr;
}

struct Fixture {
  std::string name;
  std::map<std::string, std::int64_t> dims;
};

struct Loaded {
  ir::Graph graph;
  ir::NodeCosts costs;
  std::uint64_t baseline_peak = 0;
};

inline Loaded load_fixture(const Fixture& f) {
  ir::LoadOptions o;
  o.dims = f.dims;
  Loaded l;
  l.graph =
      ir::load_model(std::string(MEMPLAN_FIXTURES) + "/" + f.name + ".training.onnx", o).graph;
  std::vector<std::string> warnings;
  l.costs = ir::make_node_costs(l.graph, ir::device_preset("a100-40gb"), {}, "roofline a100-40gb",
                                warnings);
  l.baseline_peak = ir::baseline_memory(l.graph, ir::Liveness(l.graph)).peak_bytes;
  return l;
}

struct Planned {
  planner::Plan plan;
  double budget_fraction = 0;  // of the baseline peak
};

// 50 % of the baseline peak where the solver can reach it; otherwise just
// above the smallest peak memplan can reach with the solver's options (the
// transformers at small dims are mostly parameters and gradients: ~95 %),
// so the plan still swaps or recomputes all it can. The ILP gets a short
// limit: these tests check the runtime, not the solver.
// Training state stays on the device between iterations unless `on_host`
// says otherwise: the fixtures' runs check schedules of the usual kind.
inline Planned plan_fixture(
    const Loaded& l, const std::string& solver,
    planner::PlanRequest::StateOnHost on_host = planner::PlanRequest::StateOnHost::kNever) {
  const bool swap_only = solver == "vdnn";
  const std::uint64_t reachable = planner::smallest_reachable_peak(
      l.graph, l.costs, swap_only ? solvers::Evictions::swap_only() : solvers::Evictions::both(),
      true, on_host != planner::PlanRequest::StateOnHost::kNever);
  std::vector<std::uint64_t> budgets;
  for (double above : {1.01, 1.03, 1.06, 1.1})
    budgets.push_back(std::max(l.baseline_peak / 2,
                               static_cast<std::uint64_t>(static_cast<double>(reachable) * above)));
  budgets.push_back(l.baseline_peak);
  for (std::uint64_t budget : budgets) {
    planner::PlanRequest req;
    req.budget_bytes = budget;
    req.solver = solver;
    req.time_limit_seconds = 2;
    req.max_rounds = 3;
    req.state_on_host = on_host;
    // As `memplan plan` does: a plan whose memory layout fits the budget.
    planner::LayoutFitOutcome out = planner::search_plan_with_layout(l.graph, l.costs, req);
    if (out.outcome.fits && out.layout_fits)
      return {std::move(out.outcome.plan),
              static_cast<double>(budget) / static_cast<double>(l.baseline_peak)};
  }
  ADD_FAILURE() << solver << " meets no budget up to the baseline peak";
  return {};
}

}  // namespace memplan::runtime::test_util
