// Training state as a candidate (docs/model.md §Training state): a
// parameter is swapped out from the start, freed after its last forward
// reader and brought back for the backward; an accumulation buffer, which
// only the backward reads, leaves at the start. Both end the iteration
// resident, as they began it.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "ir/baseline_memory.h"
#include "ir/device_presets.h"
#include "ir/liveness.h"
#include "ir/node_costs.h"
#include "ir/onnx_loader.h"
#include "param_graph.h"
#include "planner/plan_search.h"
#include "planner/reachable_floor.h"
#include "scheduler_test_util.h"
#include "solvers/problem_builder.h"
#include "solvers/solver_registry.h"

namespace memplan::planner {
namespace {

using sched_test::decide;
using sched_test::expect_valid;
using sched_test::text;
using sched_test::unit_costs;

// x, W and W's accumulation buffer (read only by the accumulator at the
// end, an Add here); the peak is at bw1, across the boundary.
ir::Graph param_graph() { return sched_test::param_graph("state_offload", false); }

std::size_t index_of(const std::vector<std::string>& lines, const std::string& line) {
  return static_cast<std::size_t>(std::find(lines.begin(), lines.end(), line) - lines.begin());
}

TEST(StateOffload, ParametersAndBuffersAreSwapOnlyCandidatesMadeBeforeTheFirstStep) {
  const ir::Graph g = param_graph();
  const ir::NodeCosts costs = unit_costs(g);
  const solvers::Problem p = solvers::build_problem(g, costs, 0, {});
  const ir::TensorId w = *g.find_tensor("W");
  const ir::TensorId buf = *g.find_tensor("W_grad.accumulation.buffer");
  int found = 0;
  for (const solvers::Candidate& c : p.candidates) {
    if (c.tensor == *g.find_tensor("x")) {  // a data input, read by both parts
      EXPECT_TRUE(c.state);
      continue;
    }
    if (c.tensor != w && c.tensor != buf) {
      EXPECT_FALSE(c.state) << c.name;
      continue;
    }
    ++found;
    EXPECT_TRUE(c.state) << c.name;
    EXPECT_TRUE(c.can_swap) << c.name;
    EXPECT_FALSE(c.can_recompute) << c.name;
    EXPECT_EQ(c.made, -1) << c.name;
    EXPECT_EQ(c.bytes, 1024u) << c.name;
    EXPECT_EQ(c.first_backward_use, c.tensor == w ? 8 : 9) << c.name;
    EXPECT_EQ(c.last_forward_use, c.tensor == w ? 0 : -1) << c.name;
  }
  EXPECT_EQ(found, 2);
  solvers::ProblemOptions keep;
  keep.offload_state = false;
  for (const solvers::Candidate& c : solvers::build_problem(g, costs, 0, keep).candidates)
    EXPECT_FALSE(c.state) << c.name;
}

TEST(StateOffload, ASwappedParameterLeavesAfterTheForwardAndEndsResident) {
  const ir::Graph g = param_graph();
  const ir::NodeCosts costs = unit_costs(g);
  const auto d =
      decide(g, {{"W", Decision::kSwap}, {"W_grad.accumulation.buffer", Decision::kSwap}});
  const std::uint64_t baseline = ir::baseline_memory(g, ir::Liveness(g)).peak_bytes;
  ScheduleOptions o;
  o.budget_bytes = baseline - 2048;
  const ScheduleResult r = make_schedule(g, costs, d, o);
  expect_valid(g, costs, r, o.budget_bytes);
  EXPECT_EQ(sched_test::applied(g, r, "W"), Decision::kSwap);
  EXPECT_EQ(sched_test::applied(g, r, "W_grad.accumulation.buffer"), Decision::kSwap);
  const auto lines = text(g, r.schedule);
  // The buffer's copy goes first (it is freed first), both before any compute.
  EXPECT_EQ(index_of(lines, "swap_out W_grad.accumulation.buffer"), 0u);
  EXPECT_EQ(index_of(lines, "swap_out W"), 1u);
  const std::size_t free_w = index_of(lines, "free W");
  const std::size_t in_w = index_of(lines, "swap_in W");
  ASSERT_LT(free_w, lines.size());
  ASSERT_LT(in_w, lines.size());
  EXPECT_GT(free_w, index_of(lines, "compute f0"));
  EXPECT_LT(free_w, index_of(lines, "compute f1"));
  EXPECT_GT(in_w, free_w);
  EXPECT_LT(in_w, index_of(lines, "compute bw4"));
  EXPECT_LT(index_of(lines, "free W_grad.accumulation.buffer"), index_of(lines, "compute f1"));
  EXPECT_LT(index_of(lines, "swap_in W_grad.accumulation.buffer"), index_of(lines, "compute bw5"));
  // Back for good: one free and one swap_in each, nothing after the reload.
  EXPECT_EQ(std::count(lines.begin(), lines.end(), "free W"), 1);
  EXPECT_EQ(std::count(lines.begin(), lines.end(), "swap_in W"), 1);
  EXPECT_EQ(std::count(lines.begin(), lines.end(), "free W_grad.accumulation.buffer"), 1);
  // 2 KiB of state is off the device across the forward/backward boundary.
  EXPECT_TRUE(r.fits);
  EXPECT_EQ(r.peak_bytes + 2048, baseline);
}

TEST(StateOffload, KeptStateAndOutputsAreNeverEvicted) {
  const ir::Graph g = param_graph();
  const ir::NodeCosts costs = unit_costs(g);
  // A recompute of a parameter or an eviction of an output cannot apply.
  const auto d = decide(g, {{"W", Decision::kRecompute}, {"dh", Decision::kSwap}});
  const ScheduleResult r = make_schedule(g, costs, d, {});
  expect_valid(g, costs, r, UINT64_MAX);
  EXPECT_EQ(sched_test::applied(g, r, "W"), Decision::kKeep);
  EXPECT_EQ(sched_test::applied(g, r, "dh"), Decision::kKeep);
  for (const std::string& line : text(g, r.schedule))
    EXPECT_EQ(line.find("swap"), std::string::npos) << line;
}

TEST(StateOffload, PaperBaselinesLeaveStateAlone) {
  const ir::Graph g = param_graph();
  const ir::NodeCosts costs = unit_costs(g);
  const solvers::Problem p = solvers::build_problem(g, costs, 0, {});
  int state = 0;
  for (const auto* name : {"vdnn", "atp"}) {
    const solvers::Solution s = solvers::make_solver(name)->solve(p, {});
    ASSERT_EQ(s.choice.size(), p.candidates.size());
    for (std::size_t i = 0; i < p.candidates.size(); ++i) {
      if (!p.candidates[i].state) continue;
      EXPECT_EQ(s.choice[i], Decision::kKeep) << name << " " << p.candidates[i].name;
      ++state;
    }
  }
  EXPECT_EQ(state, 6);  // x, W and the buffer, twice
}

// On an MLP the floor is the iteration's end, where parameters and buffers
// are back (the next iteration's start), so offloading them cannot lower
// it; on GPT-2 small (batch 4, seq 256) the peak is the activations', and
// state off the device there lowers the floor, by at most the state's
// bytes. A plan at that floor validates.
TEST(StateOffload, OffloadingStateLowersTheFloorOfGpt2Small) {
  ir::LoadOptions lo;
  lo.dims = {{"batch", 4}, {"seq", 256}};
  const ir::Graph g =
      ir::load_model(std::string(MEMPLAN_FIXTURES) + "/gpt2_small.training.onnx", lo).graph;
  std::vector<std::string> warnings;
  const ir::NodeCosts costs =
      ir::make_node_costs(g, ir::device_preset("a100-40gb"), {}, "roofline", warnings);
  std::uint64_t state_bytes = 0;
  for (const ir::Tensor& t : g.tensors())
    if (t.initially_resident() && !t.is_graph_output) state_bytes += t.bytes;
  const std::uint64_t kept = smallest_reachable_peak(g, costs, solvers::Evictions::both(), false);
  const std::uint64_t offloaded =
      smallest_reachable_peak(g, costs, solvers::Evictions::both(), true);
  EXPECT_LT(offloaded, kept);
  EXPECT_GE(offloaded + state_bytes, kept);
  PlanRequest req;
  req.budget_bytes = offloaded;
  req.solver = "greedy";
  const PlanOutcome out = search_plan(g, costs, req);
  ASSERT_TRUE(out.fits) << out.note;
  const Validation v = validate(g, out.plan);
  EXPECT_TRUE(v.valid) << v.message;
  std::size_t swapped_state = 0;
  for (ir::TensorId t = 0; t < g.tensors().size(); ++t)
    if (g.tensor(t).initially_resident() && out.plan.decisions[t] == Decision::kSwap)
      ++swapped_state;
  EXPECT_GT(swapped_state, 0u);
}

}  // namespace
}  // namespace memplan::planner
