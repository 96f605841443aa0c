// Training state kept on the host between iterations (docs/model.md §State
// on the host between iterations): the problem takes its bytes off outside
// its uses, and the scheduler brings it in for its first read, copies out
// what a node wrote in place, and ends with it off the device.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "ir/baseline_memory.h"
#include "ir/liveness.h"
#include "param_graph.h"
#include "planner/plan_assembly.h"
#include "planner/plan_search.h"
#include "planner/reachable_floor.h"
#include "planner/simulator.h"
#include "scheduler_test_util.h"
#include "solvers/model_eval.h"
#include "solvers/problem_builder.h"

namespace memplan::planner {
namespace {

using sched_test::decide;
using sched_test::text;
using sched_test::unit_costs;

constexpr const char* kBuf = "W_grad.accumulation.buffer";

// sched_test::param_graph with InPlaceAccumulatorV2 writing the buffer;
// x, W and the buffer start on the host.
ir::Graph host_graph() {
  ir::Graph g = sched_test::param_graph("host_state", true);
  const std::vector<ir::TensorId> host = solvers::host_state_tensors(g, {});
  EXPECT_EQ(host.size(), 3u);  // x, W, the buffer
  for (ir::TensorId t : host) g.mutable_tensors()[t].starts_on_host = true;
  return g;
}

std::size_t index_of(const std::vector<std::string>& lines, const std::string& line) {
  return static_cast<std::size_t>(std::find(lines.begin(), lines.end(), line) - lines.begin());
}

TEST(HostState, TheProblemCountsStateOnlyOverItsUsesAndLeavesTheSwapBetween) {
  const ir::Graph g = host_graph();
  const ir::NodeCosts costs = unit_costs(g);
  const solvers::Problem p = solvers::build_problem(g, costs, 0, {});
  const ir::BaselineMemory base = ir::baseline_memory(g, ir::Liveness(g));
  const std::uint64_t x = g.tensor(*g.find_tensor("x")).bytes, w = 1024;
  // x's last reader is bw2 (step 6), W's bw4 (8); the buffer's only one
  // is bw5 (9), and its copy in runs under bw4 (8). W and the buffer are
  // 1 KiB each.
  EXPECT_EQ(p.step_bytes[0], base.after_compute[0] - w);  // f0 reads x and W
  EXPECT_EQ(p.step_bytes[7], base.after_compute[7] - x - w);
  EXPECT_EQ(p.step_bytes[8], base.after_compute[8] - x);
  EXPECT_EQ(p.step_bytes[9], base.after_compute[9] - x - w);
  // The copies in of x (4 KiB) and W (1 KiB) hold back f0; the buffer's copy
  // out after bw5 ends after the last step. Every choice pays them.
  const double h2d = costs.device.h2d_bytes_per_s, d2h = costs.device.d2h_bytes_per_s;
  // (Near: the copy out is timed from the iteration's 10 s of compute.)
  EXPECT_NEAR(p.host_copy_seconds, (x + w) / h2d + w / d2h, 1e-14);
  const std::vector<Decision> keep(p.candidates.size(), Decision::kKeep);
  EXPECT_DOUBLE_EQ(solvers::evaluate(p, keep).overhead_seconds, p.host_copy_seconds);
  int found = 0;
  for (const solvers::Candidate& c : p.candidates) {
    EXPECT_NE(c.name, kBuf);  // off the device until its only reader anyway
    if (c.name != "W") continue;
    ++found;
    EXPECT_TRUE(c.can_swap);
    // Not written before the gap: its host copy is current, nothing to copy out.
    EXPECT_EQ(c.swap_out_seconds, 0.0);
    EXPECT_GT(c.swap_in_seconds, 0.0);
    EXPECT_EQ(c.swap_gap.begin, 1);
  }
  EXPECT_EQ(found, 1);
}

TEST(HostState, KeptStateComesInForItsFirstReadAndWrittenStateIsCopiedOutBeforeItLeaves) {
  const ir::Graph g = host_graph();
  const ir::NodeCosts costs = unit_costs(g);
  const ScheduleResult r = make_schedule(g, costs, decide(g, {}), {});
  const Validation v = sched_test::validate_result(g, costs, r, UINT64_MAX);
  ASSERT_TRUE(v.valid) << v.message;
  const auto lines = text(g, r.schedule);
  for (const char* t : {"x", "W", kBuf}) {
    EXPECT_EQ(std::count(lines.begin(), lines.end(), std::string("swap_in ") + t), 1) << t;
    EXPECT_EQ(std::count(lines.begin(), lines.end(), std::string("free ") + t), 1) << t;
  }
  EXPECT_LT(index_of(lines, "swap_in W"), index_of(lines, "compute f0"));
  EXPECT_GT(index_of(lines, "free W"), index_of(lines, "compute bw4"));
  // Only the buffer is written: it alone is copied out, after the write.
  EXPECT_EQ(index_of(lines, "swap_out x"), lines.size());
  EXPECT_EQ(index_of(lines, "swap_out W"), lines.size());
  const std::size_t out = index_of(lines, std::string("swap_out ") + kBuf);
  EXPECT_GT(out, index_of(lines, "compute bw5"));
  EXPECT_LT(out, index_of(lines, std::string("free ") + kBuf));
  EXPECT_LE(r.peak_bytes, ir::baseline_memory(g, ir::Liveness(g)).peak_bytes);
}

// PLAN_FORMAT times a swap_out from when its tensor was made resident; the
// buffer came in at the start, so its copy out alone could start before
// bw5 wrote it. The schedule copies bw5's flag out first: the in-order d2h
// stream then starts the buffer's copy only after the write.
TEST(HostState, TheCopyOutOfAWrittenBufferWaitsForItsWriterBehindAFence) {
  const ir::Graph g = host_graph();
  const ir::NodeCosts costs = unit_costs(g);
  const ScheduleResult r = make_schedule(g, costs, decide(g, {}), {});
  const auto lines = text(g, r.schedule);
  const std::size_t out = index_of(lines, std::string("swap_out ") + kBuf);
  ASSERT_LT(out, lines.size());
  ASSERT_GT(out, 0u);
  EXPECT_EQ(lines[out - 1], "swap_out flag");
  const SimResult sim = simulate(g, timing_plan(g, costs, r.schedule));
  const double written = sim.steps[index_of(lines, "compute bw5")].end;
  EXPECT_GE(sim.steps[out].start, written);
  EXPECT_GE(sim.steps[out - 1].start, written);
  // The buffer (1 KiB) is copied out after the write, the last step.
  EXPECT_GE(sim.iteration_seconds, written + 1024 / costs.device.d2h_bytes_per_s);
}

// A buffer that a later node reads (the optimizer step) is copied out
// after its last write, not when it is freed after that read: the copy
// runs under the rest of the iteration.
TEST(HostState, WrittenStateIsCopiedOutRightAfterItsLastWrite) {
  ir::Graph g = sched_test::param_graph("host_state_read_after", true, true);
  for (ir::TensorId t : solvers::host_state_tensors(g, {}))
    g.mutable_tensors()[t].starts_on_host = true;
  const ir::NodeCosts costs = unit_costs(g);
  const ScheduleResult r = make_schedule(g, costs, decide(g, {}), {});
  const Validation v = sched_test::validate_result(g, costs, r, UINT64_MAX);
  ASSERT_TRUE(v.valid) << v.message;
  const auto lines = text(g, r.schedule);
  const std::size_t written = index_of(lines, "compute bw5"), read = index_of(lines, "compute bw6");
  ASSERT_LT(written, read);
  ASSERT_LT(read, lines.size());
  const std::size_t out = index_of(lines, std::string("swap_out ") + kBuf);
  EXPECT_GT(out, written);
  EXPECT_LT(out, read);
  EXPECT_EQ(std::count(lines.begin(), lines.end(), std::string("swap_out ") + kBuf), 1);
  EXPECT_GT(index_of(lines, std::string("free ") + kBuf), read);
}

TEST(HostState, ASwappedParameterLeavesAfterTheForwardWithoutACopyOut) {
  const ir::Graph g = host_graph();
  const ir::NodeCosts costs = unit_costs(g);
  const ScheduleResult r = make_schedule(g, costs, decide(g, {{"W", Decision::kSwap}}), {});
  const Validation v = sched_test::validate_result(g, costs, r, UINT64_MAX);
  ASSERT_TRUE(v.valid) << v.message;
  const auto lines = text(g, r.schedule);
  EXPECT_EQ(std::count(lines.begin(), lines.end(), "swap_in W"), 2);
  EXPECT_EQ(std::count(lines.begin(), lines.end(), "free W"), 2);
  EXPECT_EQ(index_of(lines, "swap_out W"), lines.size());
  EXPECT_LT(index_of(lines, "free W"), index_of(lines, "compute f1"));
}

TEST(HostState, TheSearchListsTheStateInInitialHostWhereOnlyThatFits) {
  const ir::Graph g = host_graph();
  ir::Graph plain = g;
  for (ir::Tensor& t : plain.mutable_tensors()) t.starts_on_host = false;
  const ir::NodeCosts costs = unit_costs(plain);
  const std::uint64_t resident = smallest_reachable_peak(plain, costs, solvers::Evictions::both());
  const std::uint64_t on_host =
      smallest_reachable_peak(plain, costs, solvers::Evictions::both(), true, true);
  ASSERT_LT(on_host, resident);
  PlanRequest req;
  req.budget_bytes = on_host;
  req.solver = "greedy";
  const PlanOutcome out = search_plan(plain, costs, req);
  ASSERT_TRUE(out.fits) << out.note;
  EXPECT_EQ(out.plan.initial_host.size(), 3u);
  EXPECT_NE(out.note.find("initial_host"), std::string::npos) << out.note;
  const Validation v = validate(plain, out.plan);
  EXPECT_TRUE(v.valid) << v.message;
  req.state_on_host = PlanRequest::StateOnHost::kNever;
  EXPECT_FALSE(search_plan(plain, costs, req).fits);
  req.budget_bytes = resident;
  req.state_on_host = PlanRequest::StateOnHost::kAuto;
  const PlanOutcome kept = search_plan(plain, costs, req);
  EXPECT_TRUE(kept.fits);
  EXPECT_TRUE(kept.plan.initial_host.empty());  // auto: only where nothing else fits
}

}  // namespace
}  // namespace memplan::planner
