#include "planner/simulator.h"

#include <gtest/gtest.h>

#include "ir/onnx_loader.h"
#include "planner/plan_validator.h"
#include "timeline_expect.h"
#include "tiny_plan.h"

namespace memplan::planner {
namespace {

using test_util::plan_for;
using test_util::recompute_a_schedule;
using test_util::steps;
using test_util::tiny_graph;

using test_util::Expect;
using test_util::expect_timeline;

constexpr Stream C = Stream::kCompute, D = Stream::kD2H, H = Stream::kH2D;

TEST(Simulator, SwapOutFreeSwapInWaitsForTheLastFree) {
  // Times: mm 1, relu 0.5, neg 3, mul 1, sum 0.5; a is 32 B: out 32/16 = 2 s,
  // in 32/32 = 1 s. Memory starts at x 32 + w 64 = 96.
  ir::Graph g = tiny_graph();
  Plan plan = plan_for(g, test_util::swap_a_schedule(g));
  SimResult r = simulate(g, plan);
  expect_timeline(r, {
                         {C, 0, 1, 128},      //  0 compute mm: x, w resident at 0 -> [0,1]; +a
                         {D, 1, 3, 128},      //  1 swap_out a: a made at 1 -> [1, 1+2]
                         {C, 1, 1.5, 160},    //  2 compute relu: a at 1, stream at 1 -> [1,1.5]; +b
                         {C, 3, 3, 128},      //  3 free a: waits for swap_out a (ends 3); -a
                         {C, 3, 6, 160},      //  4 compute neg: stream at 3 -> [3,6]; +c
                         {C, 6, 6, 128},      //  5 free b: [6,6]; -b
                         {H, 6, 7, 160},      //  6 swap_in a: waits for the last free (b's, at 6),
                                              //    not for a's own free (3) -> [6, 6+1]; +a
                         {C, 7, 8, 192},      //  7 compute mul: c at 6, a at 7 -> [7,8]; +d
                         {C, 8, 8, 160},      //  8 free a: its swap_out ended at 3 -> [8,8]
                         {C, 8, 8, 128},      //  9 free c
                         {C, 8, 8.5, 132},    // 10 compute sum: [8,8.5]; +loss 4
                         {C, 8.5, 8.5, 100},  // 11 free d
                     });
  EXPECT_DOUBLE_EQ(r.iteration_seconds, 8.5);
  EXPECT_DOUBLE_EQ(r.compute_seconds, 6.0);  // 1 + 0.5 + 3 + 1 + 0.5
  EXPECT_EQ(r.peak_bytes, 192u);
  // compute stream waits: free a 1.5 -> 3 (1.5 s), mul 6 -> 7 (1 s); d2h idle
  // until 1; h2d idle until 6.
  EXPECT_DOUBLE_EQ(r.stall_seconds[0], 2.5);
  EXPECT_DOUBLE_EQ(r.stall_seconds[1], 1.0);
  EXPECT_DOUBLE_EQ(r.stall_seconds[2], 6.0);
}

TEST(Simulator, PrefetchOverlapsTheSwapInWithCompute) {
  // The same swap, but a comes back right after its free, while neg runs.
  ir::Graph g = tiny_graph();
  Plan plan = plan_for(g, steps(g, {{"compute", "mm"},
                                    {"swap_out", "a"},
                                    {"compute", "relu"},
                                    {"free", "a"},
                                    {"swap_in", "a"},
                                    {"compute", "neg"},
                                    {"free", "b"},
                                    {"compute", "mul"},
                                    {"free", "a"},
                                    {"free", "c"},
                                    {"compute", "sum"},
                                    {"free", "d"}}));
  SimResult r = simulate(g, plan);
  expect_timeline(r,
                  {
                      {C, 0, 1, 128},    //  0 mm [0,1]
                      {D, 1, 3, 128},    //  1 swap_out a [1,3]
                      {C, 1, 1.5, 160},  //  2 relu [1,1.5]
                      {C, 3, 3, 128},    //  3 free a waits for swap_out: [3,3]
                      {H, 3, 4, 160},    //  4 swap_in a: last free so far is step 3 (3) -> [3,4]
                      {C, 3, 6, 192},  //  5 neg: b at 1.5, stream at 3 -> [3,6], beside the swap_in
                      {C, 6, 6, 160},  //  6 free b: issued after the swap_in, so not waited for
                      {C, 6, 7, 192},  //  7 mul: a back at 4, c at 6 -> [6,7]
                      {C, 7, 7, 160},  //  8 free a
                      {C, 7, 7, 128},  //  9 free c
                      {C, 7, 7.5, 132},  // 10 sum [7,7.5]
                      {C, 7.5, 7.5, 100},
                  });
  EXPECT_DOUBLE_EQ(r.iteration_seconds, 7.5);
  EXPECT_DOUBLE_EQ(r.stall_seconds[2], 3.0);
}

TEST(Simulator, RecomputeRunsOnTheComputeStream) {
  // a freed without a copy after relu and recomputed from x and w for mul.
  ir::Graph g = tiny_graph();
  Plan plan = plan_for(g, recompute_a_schedule(g));
  SimResult r = simulate(g, plan);
  expect_timeline(r, {
                         {C, 0, 1, 128},      // mm [0,1]
                         {C, 1, 1.5, 160},    // relu [1,1.5]
                         {C, 1.5, 1.5, 128},  // free a: no swap_out to wait for
                         {C, 1.5, 4.5, 160},  // neg [1.5,4.5]
                         {C, 4.5, 4.5, 128},  // free b
                         {C, 4.5, 5.5, 160},  // recompute mm: 1 s again; +a
                         {C, 5.5, 6.5, 192},  // mul: a remade at 5.5
                         {C, 6.5, 6.5, 160},
                         {C, 6.5, 6.5, 128},
                         {C, 6.5, 7, 132},  // sum [6.5,7]
                         {C, 7, 7, 100},
                     });
  EXPECT_DOUBLE_EQ(r.iteration_seconds, 7);
  EXPECT_DOUBLE_EQ(r.compute_seconds, 7);  // 6 + the recompute's 1
  EXPECT_EQ(r.peak_bytes, 192u);
  EXPECT_TRUE(validate(g, plan).valid) << validate(g, plan).message;
}

TEST(Simulator, RecomputeRemakesOnlyTheOutputsThatAreGone) {
  // split: p, q = Split(x [2,4]) -> 16 B each; relu: r = Relu(p); add:
  // y = Add(q, r). Times split 1, relu 2, add 1; d2h 16 B/s (16 B: 1 s).
  test::ModelBuilder b;
  b.input("x", {std::int64_t{2}, std::int64_t{4}});
  test::set_int_attr(b.node("Split", {"x"}, {"p", "q"}, "split"), "axis", 1);
  b.node("Relu", {"p"}, {"r"}, "relu");
  b.node("Add", {"q", "r"}, {"y"}, "add");
  b.output("y");
  ir::Graph g = ir::load_model(b.write("split"), {}).graph;
  Plan plan = plan_for(g, steps(g, {{"compute", "split"},
                                    {"compute", "relu"},
                                    {"free", "p"},
                                    {"recompute", "split"},
                                    {"swap_out", "q"},
                                    {"swap_out", "p"},
                                    {"compute", "add"}}));
  plan.node_seconds = {1, 2, 1};
  SimResult r = simulate(g, plan);
  expect_timeline(r, {
                         {C, 0, 1, 64},  // split [0,1]: x 32 + p 16 + q 16
                         {C, 1, 3, 80},  // relu [1,3] +r
                         {C, 3, 3, 64},  // free p
                         {C, 3, 4, 80},  // recompute split [3,4]: p comes back, q was resident
                         {D, 1, 2, 80},  // swap_out q: q was last made resident by the compute
                                         //   ending at 1, not by the recompute -> [1,2]
                         {D, 4, 5, 80},  // swap_out p: p remade at 4 -> [4,5]
                         {C, 4, 5, 96},  // add [4,5] +y
                     });
  EXPECT_DOUBLE_EQ(r.iteration_seconds, 5);
}

TEST(Simulator, EmptyScheduleIsTheInitialState) {
  ir::Graph g = tiny_graph();
  Plan plan = plan_for(g, {});
  SimResult r = simulate(g, plan);
  EXPECT_TRUE(r.steps.empty());
  EXPECT_EQ(r.peak_bytes, 96u);
  EXPECT_EQ(r.iteration_seconds, 0);
}

TEST(Simulator, BaselineIsTheSumOfNodeTimes) {
  ir::Graph g = tiny_graph();
  Plan plan = plan_for(g, baseline_schedule(g));
  SimResult r = simulate(g, plan);
  EXPECT_DOUBLE_EQ(r.iteration_seconds, 6.0);
  EXPECT_EQ(r.peak_bytes, 192u);
  EXPECT_EQ(r.stall_seconds, (std::array<double, 3>{0, 0, 0}));
}

}  // namespace
}  // namespace memplan::planner
