#include "planner/scheduler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "ir/baseline_memory.h"
#include "ir/liveness.h"
#include "planner/baseline_plan.h"
#include "scheduler_test_util.h"

namespace memplan::planner {
namespace {

using sched_test::applied;
using sched_test::decide;
using sched_test::expect_valid;
using sched_test::text;
using sched_test::unit_costs;
using Lines = std::vector<std::string>;

// float32, batch 2: x [2,4] is the graph input (32 B); every node below
// makes 32 B except the scalar loss (4 B).
//   forward:  f0 a = Relu(x)   f1 b = Sigmoid(a)   f2 c = Tanh(b)   f3 loss = ReduceSum(c)
//   backward: bw0 d1 = Neg(c)  bw1 d2 = Mul(d1, b) bw2 d3 = Mul(d2, a)
// Baseline memory: 32; f0 64, f1 96, f2 128, f3 132, bw0 164, free c 132,
// bw1 164, free b d1 100, bw2 132, free a d2 68. Peak 164 after bw0.
ir::Graph chain_graph() {
  test::ModelBuilder b;
  b.input("x", {"batch", std::int64_t{4}});
  b.node("Relu", {"x"}, {"a"}, "f0");
  b.node("Sigmoid", {"a"}, {"b"}, "f1");
  b.node("Tanh", {"b"}, {"c"}, "f2");
  test::set_int_attr(b.node("ReduceSum", {"c"}, {"loss"}, "f3"), "keepdims", 0);
  b.node("Neg", {"c"}, {"d1"}, "bw0");
  b.node("Mul", {"d1", "b"}, {"d2"}, "bw1");
  b.node("Mul", {"d2", "a"}, {"d3"}, "bw2");
  b.output("loss").output("d3");
  return sched_test::load(b, "sched_chain");
}

// Like chain_graph, but only c is read by the backward part, after an
// unrelated bw0; b is read by f2 alone.
ir::Graph chain2_graph() {
  test::ModelBuilder b;
  b.input("x", {"batch", std::int64_t{4}});
  b.node("Relu", {"x"}, {"a"}, "f0");
  b.node("Sigmoid", {"a"}, {"b"}, "f1");
  b.node("Tanh", {"b"}, {"c"}, "f2");
  test::set_int_attr(b.node("ReduceSum", {"c"}, {"loss"}, "f3"), "keepdims", 0);
  b.node("Neg", {"x"}, {"g1"}, "bw0");
  b.node("Mul", {"g1", "c"}, {"g2"}, "bw1");
  b.output("loss").output("g2");
  return sched_test::load(b, "sched_chain2");
}

TEST(Scheduler, AllKeepIsTheBaseline) {
  ir::Graph g = chain_graph();
  ir::NodeCosts costs = unit_costs(g);
  ScheduleResult r = make_schedule(g, costs, decide(g, {}), {});
  EXPECT_EQ(text(g, r.schedule),
            (Lines{"compute f0", "compute f1", "compute f2", "compute f3", "compute bw0", "free c",
                   "compute bw1", "free b", "free d1", "compute bw2", "free a", "free d2"}));
  EXPECT_EQ(r.schedule, baseline_schedule(g));
  EXPECT_EQ(r.peak_bytes, 164u);
  EXPECT_EQ(r.peak_bytes, ir::baseline_memory(g, ir::Liveness(g)).peak_bytes);
  EXPECT_EQ(r.worst_step, 4);
  EXPECT_TRUE(r.fits);
  EXPECT_EQ(r.diagnosis, "");
  EXPECT_TRUE(std::all_of(r.applied.begin(), r.applied.end(),
                          [](Decision d) { return d == Decision::kKeep; }));
  expect_valid(g, costs, r, UINT64_MAX);
}

TEST(Scheduler, OneSwapPrefetchesAsEarlyAsTheBudgetAllows) {
  ir::Graph g = chain_graph();
  ir::NodeCosts costs = unit_costs(g);
  const auto decisions = decide(g, {{"a", Decision::kSwap}});
  ScheduleOptions o;
  o.prefetch_window = SIZE_MAX;
  // Roomy: the swap_in follows the free of a at once.
  o.budget_bytes = 164;
  ScheduleResult r = make_schedule(g, costs, decisions, o);
  EXPECT_EQ(text(g, r.schedule),
            (Lines{"compute f0", "swap_out a", "compute f1", "free a", "swap_in a", "compute f2",
                   "compute f3", "compute bw0", "free c", "compute bw1", "free b", "free d1",
                   "compute bw2", "free a", "free d2"}));
  EXPECT_EQ(applied(g, r, "a"), Decision::kSwap);
  EXPECT_EQ(r.peak_bytes, 164u);
  EXPECT_TRUE(r.fits);
  expect_valid(g, costs, r, o.budget_bytes);

  // 140 B: bw0 and bw1 hold 132 B, so a (32 B) can come back only after
  // the free of b; memory then peaks at 132, under the baseline's 164.
  o.budget_bytes = 140;
  r = make_schedule(g, costs, decisions, o);
  EXPECT_EQ(text(g, r.schedule),
            (Lines{"compute f0", "swap_out a", "compute f1", "free a", "compute f2", "compute f3",
                   "compute bw0", "free c", "compute bw1", "free b", "swap_in a", "free d1",
                   "compute bw2", "free a", "free d2"}));
  EXPECT_EQ(r.peak_bytes, 132u);
  EXPECT_EQ(r.worst_step, 6);  // right after bw0
  EXPECT_TRUE(r.fits);
  expect_valid(g, costs, r, o.budget_bytes);
}

TEST(Scheduler, PrefetchWindowBoundsHowEarly) {
  ir::Graph g = chain_graph();
  ir::NodeCosts costs = unit_costs(g);
  ScheduleOptions o;
  o.prefetch_window = 1;  // at most one compute step between swap_in and reader
  ScheduleResult r = make_schedule(g, costs, decide(g, {{"a", Decision::kSwap}}), o);
  EXPECT_EQ(text(g, r.schedule),
            (Lines{"compute f0", "swap_out a", "compute f1", "free a", "compute f2", "compute f3",
                   "compute bw0", "swap_in a", "free c", "compute bw1", "free b", "free d1",
                   "compute bw2", "free a", "free d2"}));
  expect_valid(g, costs, r, UINT64_MAX);

  // A slow copy widens the window: 32 B at 16 B/s take 2 s, two 1-s steps.
  costs.device.h2d_bytes_per_s = 16;
  r = make_schedule(g, costs, decide(g, {{"a", Decision::kSwap}}), o);
  EXPECT_EQ(text(g, r.schedule)[6], "swap_in a");
  EXPECT_EQ(text(g, r.schedule)[7], "compute bw0");
  expect_valid(g, costs, r, UINT64_MAX);
}

TEST(Scheduler, SwapFreeWaitsForTheCopyWhenMemoryAllows) {
  // The copy of a takes 4 s (32 B at 8 B/s): a, made at 1 s, is copied by
  // 5 s. Freeing it right after f1 (2 s) would stall the compute stream, so
  // the free waits until bw0 has run (5 s).
  ir::Graph g = chain_graph();
  ir::NodeCosts costs = unit_costs(g);
  costs.device.d2h_bytes_per_s = 8;
  const auto decisions = decide(g, {{"a", Decision::kSwap}});
  ScheduleOptions o;
  ScheduleResult r = make_schedule(g, costs, decisions, o);
  Lines lines = text(g, r.schedule);
  ASSERT_GE(lines.size(), 8u);
  EXPECT_EQ((Lines{lines.begin(), lines.begin() + 8}),
            (Lines{"compute f0", "swap_out a", "compute f1", "compute f2", "compute f3",
                   "compute bw0", "free c", "free a"}));
  expect_valid(g, costs, r, UINT64_MAX);

  // 132 B: bw0 would not fit beside a, so a is released just before it.
  o.budget_bytes = 132;
  r = make_schedule(g, costs, decisions, o);
  lines = text(g, r.schedule);
  EXPECT_EQ(lines[5], "free a");
  EXPECT_EQ(lines[6], "compute bw0");
  EXPECT_TRUE(r.fits);
  expect_valid(g, costs, r, o.budget_bytes);

  // Not deferred: freed right after its last forward reader.
  o.defer_swap_frees = false;
  r = make_schedule(g, costs, decisions, o);
  EXPECT_EQ(text(g, r.schedule)[3], "free a");
  expect_valid(g, costs, r, o.budget_bytes);
}

TEST(Scheduler, ReloadWhileTheFreeWaitsForTheCopyKeepsTheTensor) {
  // The copy of a takes 32 s (32 B at 1 B/s), so its free is still waiting
  // when the backward reads a again: the tensor never left, and freeing it
  // (stalling on the copy) only to swap it straight back in would cost 32 s
  // of compute stream and a copy in. It stays, and the useless copy out is
  // dropped.
  ir::Graph g = chain_graph();
  ir::NodeCosts costs = unit_costs(g);
  costs.device.d2h_bytes_per_s = 1;
  ScheduleResult r = make_schedule(g, costs, decide(g, {{"a", Decision::kSwap}}), {});
  const Lines lines = text(g, r.schedule);
  EXPECT_EQ(std::count(lines.begin(), lines.end(), "swap_out a"), 0);
  EXPECT_EQ(std::count(lines.begin(), lines.end(), "swap_in a"), 0);
  EXPECT_EQ(std::count(lines.begin(), lines.end(), "free a"), 1);
  EXPECT_EQ(r.applied[*g.find_tensor("a")], Decision::kKeep);
  expect_valid(g, costs, r, UINT64_MAX);
}

TEST(Scheduler, OneRecompute) {
  ir::Graph g = chain_graph();
  ir::NodeCosts costs = unit_costs(g);
  ScheduleResult r = make_schedule(g, costs, decide(g, {{"b", Decision::kRecompute}}), {});
  // b is released after f2 and remade from a (kept) right before bw1.
  EXPECT_EQ(text(g, r.schedule),
            (Lines{"compute f0", "compute f1", "compute f2", "free b", "compute f3", "compute bw0",
                   "free c", "recompute f1", "compute bw1", "free b", "free d1", "compute bw2",
                   "free a", "free d2"}));
  EXPECT_EQ(applied(g, r, "b"), Decision::kRecompute);
  expect_valid(g, costs, r, UINT64_MAX);
}

TEST(Scheduler, RecomputeChainRemakesTheProducersInputFirst) {
  // c is recomputed for bw1 from b, itself recomputed from a: b has no
  // backward reader, the chain is its only later use. a is kept, so it is
  // freed after f1 as in the baseline, and remade for the chain too.
  ir::Graph g = chain2_graph();
  ir::NodeCosts costs = unit_costs(g);
  ScheduleResult r = make_schedule(
      g, costs, decide(g, {{"b", Decision::kRecompute}, {"c", Decision::kRecompute}}), {});
  EXPECT_EQ(text(g, r.schedule),
            (Lines{"compute f0", "compute f1", "free a", "compute f2", "free b", "compute f3",
                   "free c", "compute bw0", "recompute f0", "recompute f1", "free a",
                   "recompute f2", "free b", "compute bw1", "free c", "free g1"}));
  EXPECT_EQ(applied(g, r, "a"), Decision::kKeep);
  EXPECT_EQ(applied(g, r, "b"), Decision::kRecompute);
  EXPECT_EQ(applied(g, r, "c"), Decision::kRecompute);
  expect_valid(g, costs, r, UINT64_MAX);

  // c alone: b, kept, is freed after f2 and remade with a for the chain.
  r = make_schedule(g, costs, decide(g, {{"c", Decision::kRecompute}}), {});
  EXPECT_EQ(text(g, r.schedule),
            (Lines{"compute f0", "compute f1", "free a", "compute f2", "free b", "compute f3",
                   "free c", "compute bw0", "recompute f0", "recompute f1", "free a",
                   "recompute f2", "free b", "compute bw1", "free c", "free g1"}));
  EXPECT_EQ(applied(g, r, "b"), Decision::kKeep);
  expect_valid(g, costs, r, UINT64_MAX);

  // Without c recomputed nothing reads b after f2: its decision cannot apply.
  r = make_schedule(g, costs, decide(g, {{"b", Decision::kRecompute}}), {});
  EXPECT_EQ(applied(g, r, "b"), Decision::kKeep);
  EXPECT_EQ(r.schedule, baseline_schedule(g));
}

TEST(Scheduler, ChainThroughASwappedInput) {
  // c recomputed from b, which is swapped: b comes back before f2 reruns.
  // A window of 0 steps still reaches back far enough for the copy to run
  // under some compute: across bw0.
  ir::Graph g = chain2_graph();
  ir::NodeCosts costs = unit_costs(g);
  ScheduleOptions o;
  o.prefetch_window = 0;
  ScheduleResult r =
      make_schedule(g, costs, decide(g, {{"b", Decision::kSwap}, {"c", Decision::kRecompute}}), o);
  EXPECT_EQ(text(g, r.schedule),
            (Lines{"compute f0", "compute f1", "swap_out b", "free a", "compute f2", "free b",
                   "compute f3", "free c", "swap_in b", "compute bw0", "recompute f2", "free b",
                   "compute bw1", "free c", "free g1"}));
  expect_valid(g, costs, r, UINT64_MAX);
}

// a = Relu(x); dr = Dropout(a) (no mask output: nothing to remake dr
// from); c = Tanh(dr); loss; the backward reads c at bw1 only, so a
// recompute of c needs dr, which nothing else reads after f2.
ir::Graph dropout_graph() {
  test::ModelBuilder b;
  b.input("x", {"batch", std::int64_t{4}});
  b.node("Relu", {"x"}, {"a"}, "f0");
  b.node("Dropout", {"a"}, {"dr"}, "drop");
  b.node("Tanh", {"dr"}, {"c"}, "f2");
  test::set_int_attr(b.node("ReduceSum", {"c"}, {"loss"}, "f3"), "keepdims", 0);
  b.node("Neg", {"x"}, {"g1"}, "bw0");
  b.node("Mul", {"g1", "c"}, {"g2"}, "bw1");
  b.output("loss").output("g2");
  return sched_test::load(b, "sched_dropout");
}

TEST(Scheduler, RandomNodeIsNeverRecomputed) {
  ir::Graph g = dropout_graph();
  ASSERT_TRUE(g.node(*g.find_node("drop")).is_random());
  ir::NodeCosts costs = unit_costs(g);
  ScheduleResult r = make_schedule(
      g, costs, decide(g, {{"dr", Decision::kRecompute}, {"c", Decision::kRecompute}}), {});
  EXPECT_EQ(applied(g, r, "dr"), Decision::kKeep);
  EXPECT_EQ(applied(g, r, "c"), Decision::kRecompute);
  // dr cannot be remade, so it stays resident until Tanh reruns on it.
  EXPECT_EQ(text(g, r.schedule),
            (Lines{"compute f0", "compute drop", "free a", "compute f2", "compute f3", "free c",
                   "compute bw0", "recompute f2", "free dr", "compute bw1", "free c", "free g1"}));
  expect_valid(g, costs, r, UINT64_MAX);

  // Swapping a random node's output is fine: nothing is rerun.
  r = make_schedule(g, costs, decide(g, {{"dr", Decision::kSwap}, {"c", Decision::kRecompute}}),
                    {});
  EXPECT_EQ(applied(g, r, "dr"), Decision::kSwap);
  const Lines lines = text(g, r.schedule);
  EXPECT_EQ(std::count(lines.begin(), lines.end(), "swap_in dr"), 1);
  EXPECT_EQ(std::count(lines.begin(), lines.end(), "recompute drop"), 0);
  expect_valid(g, costs, r, UINT64_MAX);
}

TEST(Scheduler, DecisionsThatCannotApplyFallBackToKeep) {
  ir::Graph g = chain_graph();
  ir::NodeCosts costs = unit_costs(g);
  ScheduleResult r = make_schedule(
      g, costs,
      decide(g, {{"x", Decision::kSwap}, {"loss", Decision::kRecompute}, {"d3", Decision::kSwap}}),
      {});
  EXPECT_EQ(applied(g, r, "x"), Decision::kKeep);     // graph input
  EXPECT_EQ(applied(g, r, "loss"), Decision::kKeep);  // graph output
  EXPECT_EQ(applied(g, r, "d3"), Decision::kKeep);    // graph output
  EXPECT_EQ(r.schedule, baseline_schedule(g));
  // A short decisions vector: the rest count as keep.
  r = make_schedule(g, costs, {}, {});
  EXPECT_EQ(r.applied.size(), g.tensors().size());
  EXPECT_EQ(r.schedule, baseline_schedule(g));
}

TEST(Scheduler, InfeasibleBudgetIsReportedAndStillValid) {
  ir::Graph g = chain_graph();
  ir::NodeCosts costs = unit_costs(g);
  ScheduleOptions o;
  o.budget_bytes = 100;
  ScheduleResult r = make_schedule(g, costs, decide(g, {}), o);
  EXPECT_FALSE(r.fits);
  EXPECT_EQ(r.peak_bytes, 164u);
  EXPECT_EQ(r.over_budget_bytes, 64u);
  EXPECT_EQ(r.worst_step, 4);
  EXPECT_NE(r.diagnosis.find("step 4 (compute 'bw0')"), std::string::npos) << r.diagnosis;
  EXPECT_NE(r.diagnosis.find("64 B over the budget of 100 B"), std::string::npos) << r.diagnosis;
  EXPECT_NE(r.diagnosis.find("'x' 32 B"), std::string::npos) << r.diagnosis;
  expect_valid(g, costs, r, o.budget_bytes);

  // Swapping a alone gets to 132 B, still 12 B over 120.
  o.budget_bytes = 120;
  r = make_schedule(g, costs, decide(g, {{"a", Decision::kSwap}}), o);
  EXPECT_FALSE(r.fits);
  EXPECT_EQ(r.peak_bytes, 132u);
  EXPECT_EQ(r.over_budget_bytes, 12u);
  expect_valid(g, costs, r, o.budget_bytes);
}

// Forward a = Relu(x), loss; backward reads a at bw0 and again at bw3, with
// a 128-B temporary between. Kept from bw0 to bw3, a sits on the peak.
ir::Graph two_reader_graph() {
  test::ModelBuilder b;
  b.input("x", {"batch", std::int64_t{4}});
  b.node("Relu", {"x"}, {"a"}, "f0");
  test::set_int_attr(b.node("ReduceSum", {"a"}, {"loss"}, "f1"), "keepdims", 0);
  b.node("Neg", {"a"}, {"g1"}, "bw0");
  test::set_int_attr(b.node("Concat", {"x", "x", "x", "x"}, {"big"}, "bw1"), "axis", 1);
  test::set_int_attr(b.node("ReduceSum", {"big"}, {"s"}, "bw2"), "keepdims", 0);
  b.node("Mul", {"a", "g1"}, {"g2"}, "bw3");
  b.node("Add", {"g2", "s"}, {"out"}, "bw4");
  b.output("loss").output("out");
  return sched_test::load(b, "sched_two_readers");
}

TEST(Scheduler, RecomputedTensorIsMadeOnceWhileTheBudgetAllows) {
  ir::Graph g = two_reader_graph();
  ir::NodeCosts costs = unit_costs(g);
  const auto decisions = decide(g, {{"a", Decision::kRecompute}});
  const Step recompute_f0{StepOp::kRecompute, *g.find_node("f0")};
  // No budget: one recompute, a held from bw0 to bw3; at bw2 x 32, loss 4,
  // a 32, g1 32, big 128 and s 4 make 232 B.
  ScheduleResult r = make_schedule(g, costs, decisions, {});
  EXPECT_EQ(std::count(r.schedule.begin(), r.schedule.end(), recompute_f0), 1);
  EXPECT_EQ(r.peak_bytes, 232u);
  expect_valid(g, costs, r, UINT64_MAX);
  // 200 B: a is released after bw0 and recomputed again for bw3.
  ScheduleOptions o;
  o.budget_bytes = 200;
  r = make_schedule(g, costs, decisions, o);
  EXPECT_EQ(std::count(r.schedule.begin(), r.schedule.end(), recompute_f0), 2);
  EXPECT_EQ(r.peak_bytes, 200u);
  EXPECT_TRUE(r.fits);
  expect_valid(g, costs, r, o.budget_bytes);
  // Without repair rounds it stays over budget.
  o.split_rounds = 0;
  r = make_schedule(g, costs, decisions, o);
  EXPECT_FALSE(r.fits);
  EXPECT_EQ(r.over_budget_bytes, 32u);
}

// Split makes p and q from a; f2 reads both in the forward.
ir::Graph split_graph(bool backward_reads_q) {
  test::ModelBuilder b;
  b.input("x", {"batch", std::int64_t{4}});
  b.node("Relu", {"x"}, {"a"}, "f0");
  test::set_int_attr(b.node("Split", {"a"}, {"p", "q"}, "f1"), "axis", 1);
  test::set_int_attr(b.node("Concat", {"p", "q"}, {"c"}, "f2"), "axis", 1);
  test::set_int_attr(b.node("ReduceSum", {"c"}, {"loss"}, "f3"), "keepdims", 0);
  if (backward_reads_q) {
    b.node("Mul", {"p", "q"}, {"g"}, "bw0");
  } else {
    b.node("Neg", {"p"}, {"g"}, "bw0");
  }
  b.output("loss").output("g");
  return sched_test::load(b, backward_reads_q ? "sched_split_pq" : "sched_split_p");
}

TEST(Scheduler, RecomputeReleasesOutputsNobodyNeeds) {
  ir::Graph g = split_graph(false);
  ir::NodeCosts costs = unit_costs(g);
  ScheduleResult r = make_schedule(g, costs, decide(g, {{"p", Decision::kRecompute}}), {});
  // Rerunning f1 (on a, remade too) remakes q as well; nothing reads q
  // again, so it goes at once.
  EXPECT_EQ(text(g, r.schedule),
            (Lines{"compute f0", "compute f1", "free a", "compute f2", "free p", "free q",
                   "compute f3", "free c", "recompute f0", "recompute f1", "free a", "free q",
                   "compute bw0", "free p"}));
  expect_valid(g, costs, r, UINT64_MAX);
}

TEST(Scheduler, SiblingsShareOneRecompute) {
  ir::Graph g = split_graph(true);
  ir::NodeCosts costs = unit_costs(g);
  ScheduleResult r = make_schedule(
      g, costs, decide(g, {{"p", Decision::kRecompute}, {"q", Decision::kRecompute}}), {});
  EXPECT_EQ(text(g, r.schedule),
            (Lines{"compute f0", "compute f1", "free a", "compute f2", "free p", "free q",
                   "compute f3", "free c", "recompute f0", "recompute f1", "free a", "compute bw0",
                   "free p", "free q"}));
  expect_valid(g, costs, r, UINT64_MAX);

  // q swapped, p recomputed: the recompute brings q back, no swap_in needed.
  r = make_schedule(g, costs, decide(g, {{"p", Decision::kRecompute}, {"q", Decision::kSwap}}), {});
  const Lines lines = text(g, r.schedule);
  EXPECT_EQ(std::count(lines.begin(), lines.end(), "swap_in q"), 0);
  EXPECT_EQ(std::count(lines.begin(), lines.end(), "swap_out q"), 1);
  EXPECT_EQ(r.applied[*g.find_tensor("q")], Decision::kSwap);
  EXPECT_EQ(std::count(lines.begin(), lines.end(), "recompute f1"), 1);
  expect_valid(g, costs, r, UINT64_MAX);
}

}  // namespace
}  // namespace memplan::planner
