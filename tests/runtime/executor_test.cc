// The executor and the host backend on the five-node graph of
// tests/planner/tiny_plan.h: the waits PLAN_FORMAT's timing rules imply,
// the pattern checks, and corrupted schedules caught at run time.
#include "runtime-stub/executor.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "planner/memory_layout.h"
#include "planner/tiny_plan.h"
#include "runtime-stub/host_backend.h"
#include "runtime-stub/pattern.h"
#include "runtime_test_util.h"
#include "util/errors.h"

namespace memplan::runtime {
namespace {

using planner::Plan;
using planner::test_util::plan_for;
using planner::test_util::steps;
using planner::test_util::tiny_graph;

using test_util::op_for_step;
using test_util::run_host;

TEST(Pattern, WriteCheckAndPoison) {
  std::vector<std::byte> mem(256, std::byte{kPoisonByte});
  const TensorRange r{8, 21, pattern_seed("t"), 0};  // 2 words and a 5-byte tail
  EXPECT_EQ(check_pattern(mem.data(), r), CheckOutcome::kFreedMemory);
  write_pattern(mem.data(), r);
  EXPECT_EQ(check_pattern(mem.data(), r), CheckOutcome::kOk);
  EXPECT_EQ(mem[8 + 21], std::byte{kPoisonByte});  // nothing past the tensor
  // Another tensor's bytes, or the same bytes one word off, are wrong.
  EXPECT_EQ(check_pattern(mem.data(), {8, 21, pattern_seed("u"), 0}), CheckOutcome::kWrongBytes);
  EXPECT_EQ(check_pattern(mem.data(), {16, 13, pattern_seed("t"), 0}), CheckOutcome::kWrongBytes);
  mem[8 + 20] = std::byte{0};  // the last tail byte
  EXPECT_EQ(check_pattern(mem.data(), r), CheckOutcome::kWrongBytes);
}

TEST(Program, WaitsFollowTheTimingRules) {
  const ir::Graph g = tiny_graph();
  const Plan plan = plan_for(g, planner::test_util::swap_a_schedule(g));
  // 0 compute mm, 1 swap_out a, 2 compute relu, 3 free a, 4 compute neg,
  // 5 free b, 6 swap_in a, 7 compute mul, ...
  const BuiltProgram built = build_program(g, plan, planner::compute_memory_layout(g, plan), 1);
  const Program& p = built.program;
  EXPECT_TRUE(built.static_errors.empty());
  const Wait after_mm{Stream::kCompute, 0};
  EXPECT_EQ(op_for_step(p, 1)->waits, std::vector<Wait>{after_mm});  // swap_out a: made by mm
  EXPECT_EQ(op_for_step(p, 3)->waits, (std::vector<Wait>{{Stream::kD2H, 0}}));  // free a: swap_out
  // swap_in a: the last free before it (free b, the 5th compute-stream op).
  EXPECT_EQ(op_for_step(p, 6)->waits, (std::vector<Wait>{{Stream::kCompute, 4}}));
  EXPECT_EQ(op_for_step(p, 7)->waits, (std::vector<Wait>{{Stream::kH2D, 0}}));  // mul: swap_in a
  EXPECT_EQ(op_for_step(p, 7)->reads.size(), 2u);                               // c and a
  EXPECT_EQ(p.host_pool_bytes, 256u);                                           // a's slot, aligned
  EXPECT_TRUE(p.awaited[0][0] && p.awaited[1][0] && p.awaited[2][0]);
}

TEST(HostRun, ValidPlansHaveNoIntegrityErrors) {
  const ir::Graph g = tiny_graph();
  for (const auto& schedule :
       {planner::baseline_schedule(g), planner::test_util::swap_a_schedule(g)}) {
    const Plan plan = plan_for(g, schedule);
    const RunReport r = run_host(g, plan);
    EXPECT_EQ(r.integrity_errors(), 0u);
    EXPECT_GT(r.checks, 0u);
    EXPECT_EQ(r.planned_peak_bytes, plan.predicted.peak_bytes);
    EXPECT_EQ(r.measured_seconds.size(), 1u);
  }
}

TEST(HostRun, RecomputeBringsBackTheSameBytes) {
  const ir::Graph g = tiny_graph();
  // a freed after neg, remade by recomputing mm for mul.
  const Plan plan = plan_for(g, steps(g, {{"compute", "mm"},
                                          {"compute", "relu"},
                                          {"compute", "neg"},
                                          {"free", "a"},
                                          {"free", "b"},
                                          {"recompute", "mm"},
                                          {"compute", "mul"},
                                          {"free", "a"},
                                          {"free", "c"},
                                          {"compute", "sum"},
                                          {"free", "d"}}));
  EXPECT_EQ(run_host(g, plan).integrity_errors(), 0u);
}

TEST(HostRun, DroppedSwapInReadsFreedMemory) {
  const ir::Graph g = tiny_graph();
  Plan plan = plan_for(g, planner::test_util::swap_a_schedule(g));
  std::erase_if(plan.schedule,
                [](const planner::Step& s) { return s.op == planner::StepOp::kSwapIn; });
  const RunReport r = run_host(g, plan);
  EXPECT_GE(r.freed_reads + r.wrong_bytes, 1u);  // mul reads a where it was
  EXPECT_EQ(r.static_errors, 0u);                // found by the run, not the builder
}

TEST(HostRun, EarlyFreeIsCaught) {
  const ir::Graph g = tiny_graph();
  // b freed before neg reads it.
  const Plan plan = plan_for(g, steps(g, {{"compute", "mm"},
                                          {"compute", "relu"},
                                          {"free", "b"},
                                          {"compute", "neg"},
                                          {"compute", "mul"},
                                          {"free", "a"},
                                          {"free", "c"},
                                          {"compute", "sum"},
                                          {"free", "d"}}));
  const RunReport r = run_host(g, plan);
  EXPECT_EQ(r.freed_reads, 1u);
  ASSERT_FALSE(r.first_errors.empty());
  EXPECT_EQ(r.first_errors[0].tensor, "b");
  EXPECT_EQ(r.first_errors[0].step, 3);
  EXPECT_EQ(r.first_errors[0].what, "freed memory");
}

TEST(HostRun, MissingGraphOutputIsReported) {
  const ir::Graph g = tiny_graph();
  std::vector<planner::Step> s = planner::baseline_schedule(g);
  s.push_back({planner::StepOp::kFree, *g.find_tensor("loss")});
  const RunReport r = run_host(g, plan_for(g, s));
  EXPECT_EQ(r.static_errors, 1u);
}

TEST(HostRun, ALayoutForAnotherPlanIsRefused) {
  const ir::Graph g = tiny_graph();
  const Plan swap = plan_for(g, planner::test_util::swap_a_schedule(g));
  const Plan base = plan_for(g, planner::baseline_schedule(g));
  HostBackend backend;
  EXPECT_THROW(run_plan(g, swap, planner::compute_memory_layout(g, base), backend),
               InvalidPlanError);
}

TEST(HostTimeScale, GrowsWithTheHostsWork) {
  Program p;
  Op op;
  op.seconds = 1e-3;
  op.writes.push_back({0, 1'000'000, 1, 0});
  p.streams[0].push_back(op);
  HostSpeed fast{1e12, 1e12, 1e12, 0};
  HostSpeed slow{1e8, 1e8, 1e8, 0};  // 10 ms for the op's 1 MB: scale ~10
  EXPECT_EQ(host_time_scale(p, fast), 1.0);
  const double s = host_time_scale(p, slow);
  EXPECT_GE(s, 9.7);
  EXPECT_LE(s, 11.0);
}

}  // namespace
}  // namespace memplan::runtime
