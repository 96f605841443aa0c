// A plan with `initial_host` on the executor and the host backend: the
// offloaded tensor's values start in the host pool only, its swap_in brings
// them, an in-place write gives it new values, and the host copy at the end
// must hold those (the next iteration starts from it).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "planner/host_state_plan.h"
#include "planner/memory_layout.h"
#include "runtime-stub/executor.h"
#include "runtime-stub/pattern.h"
#include "runtime_test_util.h"

namespace memplan::runtime {
namespace {

using planner::Plan;
using planner::test_util::buf_left_resident_schedule;
using planner::test_util::host_plan;
using planner::test_util::offload_buf_schedule;
using planner::test_util::steps;
using test_util::op_for_step;
using test_util::run_host;

class InitialHostRun : public ::testing::Test {
 protected:
  ir::Graph g = planner::test_util::host_state_graph();
  std::uint64_t seed_of(const char* name) const { return pattern_seed(name); }
};

TEST_F(InitialHostRun, TheValuesStartInTheHostPoolOnly) {
  const Plan plan = host_plan(g, offload_buf_schedule(g));
  const planner::MemoryLayout layout = planner::compute_memory_layout(g, plan);
  const BuiltProgram built = build_program(g, plan, layout, 1);
  const Program& p = built.program;
  EXPECT_TRUE(built.static_errors.empty());
  // x and w are written into the arena; buf only into its host slot.
  ASSERT_EQ(p.initial.size(), 2u);
  for (const TensorRange& r : p.initial) EXPECT_NE(r.seed, seed_of("buf"));
  ASSERT_EQ(p.initial_host.size(), 1u);
  EXPECT_EQ(p.initial_host[0].seed, seed_of("buf"));
  EXPECT_EQ(p.initial_host[0].bytes, 64u);
  // The swap_in (step 0) reads that slot.
  const Op* swap_in = op_for_step(p, 0);
  ASSERT_NE(swap_in, nullptr);
  EXPECT_EQ(swap_in->kind, OpKind::kCopyIn);
  EXPECT_EQ(swap_in->host_offset, p.initial_host[0].offset);
  // The copy out (step 3) goes to the same slot, after acc (the second
  // compute op) wrote buf: a wait the timing rules lack.
  const Op* swap_out = op_for_step(p, 3);
  ASSERT_NE(swap_out, nullptr);
  EXPECT_EQ(swap_out->host_offset, p.initial_host[0].offset);
  EXPECT_EQ(swap_out->waits, (std::vector<Wait>{{Stream::kCompute, 1}}));
  // acc writes buf with its next pattern, and the end checks the host copy
  // for that pattern.
  const Op* acc = op_for_step(p, 2);
  ASSERT_NE(acc, nullptr);
  const std::uint64_t next = written_seed(seed_of("buf"), 1);
  EXPECT_TRUE(std::any_of(acc->writes.begin(), acc->writes.end(),
                          [&](const TensorRange& r) { return r.seed == next; }));
  ASSERT_EQ(p.final_host_reads.size(), 1u);
  EXPECT_EQ(p.final_host_reads[0].seed, next);
  EXPECT_EQ(p.final_host_reads[0].offset, p.initial_host[0].offset);
}

TEST_F(InitialHostRun, AValidPlanRunsWithoutIntegrityErrors) {
  const Plan plan = host_plan(g, offload_buf_schedule(g));
  HostBackend backend;
  RunOptions o;
  o.time_scale = test_util::kTinyScale;
  o.iterations = 2;  // each iteration starts from the host again
  const RunReport r = run_plan(g, plan, planner::compute_memory_layout(g, plan), backend, o);
  EXPECT_EQ(r.integrity_errors(), 0u);
  for (const IntegrityError& e : r.first_errors) ADD_FAILURE() << e.tensor << ": " << e.what;
  EXPECT_GT(r.checks, 0u);
  EXPECT_EQ(r.planned_peak_bytes, 257u);
}

TEST_F(InitialHostRun, WithoutTheKeyTheWriteStillChecksOut) {
  // Every input resident, buf written in place and checked at the end with
  // its new pattern.
  const Plan plan = host_plan(
      g, steps(g, {{"compute", "mm"}, {"compute", "acc"}, {"compute", "sum"}, {"free", "a"}}), {});
  const RunReport r = run_host(g, plan);
  EXPECT_EQ(r.integrity_errors(), 0u);
}

TEST_F(InitialHostRun, AHostCopyFromBeforeTheLastWriteIsCaught) {
  // Invalid (the validator says so too): buf's only copy out comes before
  // acc writes it. The free waits for that copy and the second swap_in for
  // the free, so the copy is done before acc starts: no race decides this.
  const Plan plan = host_plan(g, steps(g, {{"swap_in", "buf"},
                                           {"compute", "mm"},
                                           {"swap_out", "buf"},
                                           {"free", "buf"},
                                           {"swap_in", "buf"},
                                           {"compute", "acc"},
                                           {"free", "buf"},
                                           {"compute", "sum"},
                                           {"free", "a"}}));
  const RunReport r = run_host(g, plan);
  EXPECT_EQ(r.wrong_bytes, 1u);
  EXPECT_EQ(r.static_errors, 0u);
  ASSERT_EQ(r.first_errors.size(), 1u);
  EXPECT_EQ(r.first_errors[0].tensor, "buf");
  EXPECT_EQ(r.first_errors[0].step, 9);  // the end
  EXPECT_EQ(r.first_errors[0].what, "wrong bytes (host copy)");
}

TEST_F(InitialHostRun, ResidentAtTheEndIsAStaticError) {
  const Plan plan = host_plan(g, buf_left_resident_schedule(g));
  const RunReport r = run_host(g, plan);
  EXPECT_EQ(r.static_errors, 1u);
  ASSERT_FALSE(r.first_errors.empty());
  EXPECT_EQ(r.first_errors[0].what, "end: initial_host tensor 'buf' is resident");
  EXPECT_EQ(r.wrong_bytes + r.freed_reads, 0u);  // its copy is current
}

}  // namespace
}  // namespace memplan::runtime
