// A Dropout's output is recomputed from its kept mask (ONNX Runtime's
// DropoutGrad(x, mask) gives it back bit for bit): the mask then stays
// resident up to the recompute, and an evicted mask means no recompute.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "planner/plan_validator.h"
#include "scheduler_test_util.h"
#include "solvers/problem_builder.h"

namespace memplan::planner {
namespace {

using sched_test::applied;
using sched_test::decide;
using sched_test::text;
using sched_test::unit_costs;

// f0 Relu -> drop Dropout (dr, mask) -> f2 Tanh (c) -> f3 ReduceSum = loss;
// the backward reads `backward_reads` (dr or c, bw1) and, after it, the mask
// (bw2, DropoutGrad).
ir::Graph dropout_graph(bool mask_read_in_backward = true,
                        const std::string& backward_reads = "dr") {
  test::ModelBuilder b;
  b.input("x", {std::string("batch"), std::int64_t{8}});
  b.node("Relu", {"x"}, {"a"}, "f0");
  b.node("Dropout", {"a"}, {"dr", "mask"}, "drop");
  b.node("Tanh", {"dr"}, {"c"}, "f2");
  test::set_int_attr(b.node("ReduceSum", {"c"}, {"loss"}, "f3"), "keepdims", 0);
  b.node("Neg", {"x"}, {"g1"}, "bw0");
  b.node("Mul", {"g1", backward_reads}, {"g2"}, "bw1");
  if (mask_read_in_backward) {
    b.node("DropoutGrad", {"g2", "mask"}, {"g3"}, "bw2", "com.microsoft");
    b.output("loss").output("g3");
  } else {
    b.output("loss").output("g2");
  }
  return sched_test::load(b, "dropout_recompute_" + backward_reads);
}

bool has_step(const ir::Graph& g, const ScheduleResult& r, const std::string& line) {
  const auto lines = text(g, r.schedule);
  return std::find(lines.begin(), lines.end(), line) != lines.end();
}

TEST(DropoutRecompute, OnlyADropoutThatOutputsItsMaskIsReproducible) {
  ir::Graph g = dropout_graph();
  const ir::Node& drop = g.node(*g.find_node("drop"));
  EXPECT_TRUE(drop.is_random());
  EXPECT_EQ(drop.dropout_mask(), *g.find_tensor("mask"));
  EXPECT_TRUE(drop.reproducible());
  EXPECT_EQ(g.node(*g.find_node("f0")).dropout_mask(), ir::kNoTensor);
}

TEST(DropoutRecompute, RemadeBeforeItsBackwardReaderWhileTheMaskStays) {
  ir::Graph g = dropout_graph();
  ir::NodeCosts costs = unit_costs(g);
  ScheduleResult r = make_schedule(g, costs, decide(g, {{"dr", Decision::kRecompute}}), {});
  EXPECT_EQ(applied(g, r, "dr"), Decision::kRecompute);
  EXPECT_TRUE(has_step(g, r, "recompute drop"));
  EXPECT_TRUE(sched_test::validate_result(g, costs, r, UINT64_MAX).valid);
  EXPECT_EQ(sched_test::replay(g, r.schedule), "");
}

TEST(DropoutRecompute, KeptWhenTheMaskIsEvicted) {
  ir::Graph g = dropout_graph();
  ScheduleResult r = make_schedule(
      g, unit_costs(g), decide(g, {{"dr", Decision::kRecompute}, {"mask", Decision::kSwap}}), {});
  EXPECT_EQ(applied(g, r, "dr"), Decision::kKeep);
  EXPECT_FALSE(has_step(g, r, "recompute drop"));
}

TEST(DropoutRecompute, AMaskNothingElseReadsIsHeldForTheRecompute) {
  ir::Graph g = dropout_graph(false);  // in the baseline the mask is freed right after the Dropout
  ir::NodeCosts costs = unit_costs(g);
  ScheduleResult r = make_schedule(g, costs, decide(g, {{"dr", Decision::kRecompute}}), {});
  ASSERT_EQ(applied(g, r, "dr"), Decision::kRecompute);
  const auto lines = text(g, r.schedule);
  const auto rec = std::find(lines.begin(), lines.end(), "recompute drop");
  const auto freed = std::find(lines.begin(), lines.end(), "free mask");
  ASSERT_NE(rec, lines.end());
  EXPECT_GT(freed, rec) << "the mask is freed only after the recompute that reads it";
  EXPECT_EQ(sched_test::replay(g, r.schedule), "");
  EXPECT_TRUE(sched_test::validate_result(g, costs, r, UINT64_MAX).valid);
}

TEST(DropoutRecompute, TheValidatorRefusesARecomputeWithoutTheMask) {
  ir::Graph g = dropout_graph();
  ir::NodeCosts costs = unit_costs(g);
  ScheduleResult r = make_schedule(g, costs, decide(g, {{"dr", Decision::kRecompute}}), {});
  // Cut the schedule after the recompute and free the mask just before it.
  std::vector<Step> s = r.schedule;
  const auto rec = std::find(s.begin(), s.end(), Step{StepOp::kRecompute, *g.find_node("drop")});
  ASSERT_NE(rec, s.end());
  s.erase(rec + 1, s.end());
  s.insert(s.end() - 1, Step{StepOp::kFree, *g.find_tensor("mask")});
  Plan plan = sched_test::whole_plan(g, costs, s, r.applied, true, 0, UINT64_MAX);
  Validation v = validate(g, plan);
  EXPECT_FALSE(v.valid);
  EXPECT_NE(v.message.find("recomputed from its mask"), std::string::npos) << v.message;
}

// The Dropout, and Relu before it: the baseline frees a, the Dropout's
// input, right after the Dropout, so the chain remakes it too.
TEST(DropoutRecompute, TheKnapsackOffersItAtTheCostOfItsChain) {
  ir::Graph g = dropout_graph();
  ir::NodeCosts costs = unit_costs(g, 2.0);
  solvers::Problem p = solvers::build_problem(g, costs, 0, {});
  const ir::TensorId dr = *g.find_tensor("dr"), mask = *g.find_tensor("mask");
  bool found = false;
  for (const auto& c : p.candidates) {
    EXPECT_NE(c.tensor, mask) << "the mask a recompute reads stays on the device";
    if (c.tensor != dr) continue;
    found = true;
    EXPECT_TRUE(c.can_recompute);
    EXPECT_DOUBLE_EQ(c.recompute_seconds, 4.0);
  }
  EXPECT_TRUE(found);
}

// The forward alone reads dr, the backward reads c and then the mask. A
// recompute of c runs Tanh on dr, which the baseline freed after f2: the
// chain remakes dr from its mask too.
ir::Graph dropout_inside_a_chain() { return dropout_graph(true, "c"); }

// The model prices that chain (Tanh, Dropout, Relu), so the scheduler must
// run it too: dr is freed in the forward where the baseline frees it, not
// held across the peak for the chain.
TEST(DropoutRecompute, InsideAChainTheDropoutIsRemadeFromItsKeptMask) {
  ir::Graph g = dropout_inside_a_chain();
  ir::NodeCosts costs = unit_costs(g);
  ScheduleResult r = make_schedule(g, costs, decide(g, {{"c", Decision::kRecompute}}), {});
  ASSERT_EQ(applied(g, r, "c"), Decision::kRecompute);
  const auto lines = text(g, r.schedule);
  const auto free_dr = std::find(lines.begin(), lines.end(), "free dr");
  const auto backward = std::find(lines.begin(), lines.end(), "compute bw0");
  const auto remade = std::find(lines.begin(), lines.end(), "recompute drop");
  ASSERT_NE(free_dr, lines.end());
  EXPECT_LT(free_dr, backward) << "dr freed in the forward";
  ASSERT_NE(remade, lines.end());
  EXPECT_GT(remade, backward);
  EXPECT_LT(remade, std::find(lines.begin(), lines.end(), "recompute f2"));
  EXPECT_EQ(sched_test::replay(g, r.schedule), "");
  EXPECT_TRUE(sched_test::validate_result(g, costs, r, UINT64_MAX).valid);
}

TEST(DropoutRecompute, TheChainThroughADropoutIsAnOptionOfTheProblem) {
  ir::Graph g = dropout_inside_a_chain();
  ir::NodeCosts costs = unit_costs(g, 2.0);
  const ir::TensorId c = *g.find_tensor("c"), mask = *g.find_tensor("mask");
  EXPECT_TRUE(solvers::has_dropout_chains(g));
  int recomputable = 0;
  for (bool inside : {true, false}) {
    solvers::ProblemOptions o;
    o.remake_dropouts_in_chains = inside;
    const solvers::Problem p = solvers::build_problem(g, costs, 0, o);
    for (const auto& cand : p.candidates) {
      EXPECT_NE(cand.tensor, mask) << "masks stay on the device when recomputes are allowed";
      if (cand.tensor != c || !cand.can_recompute) continue;
      ++recomputable;
      EXPECT_TRUE(inside) << "c recomputable without remaking the Dropout";
      EXPECT_DOUBLE_EQ(cand.recompute_seconds, 6.0);  // Tanh, Dropout, Relu
    }
  }
  EXPECT_EQ(recomputable, 1);
}

// A mask is random: a candidate it may be (for swapping, where recomputes
// are not allowed), a recompute never, from itself or otherwise.
TEST(DropoutRecompute, AMaskIsNeverARecomputeCandidate) {
  ir::Graph g = dropout_inside_a_chain();
  solvers::ProblemOptions o;
  o.evictions = solvers::Evictions::swap_only();
  const solvers::Problem swaps = solvers::build_problem(g, unit_costs(g), 0, o);
  const ir::TensorId mask = *g.find_tensor("mask");
  bool seen = false;
  for (const auto& cand : swaps.candidates) {
    if (cand.tensor != mask) continue;
    seen = true;
    EXPECT_FALSE(cand.can_recompute);
  }
  EXPECT_TRUE(seen);
}

}  // namespace
}  // namespace memplan::planner
