// PLAN_FORMAT's `initial_host` in the replay (Residency), the validator, the
// simulator and the memory layout: offloaded state starts with a host copy
// and no device bytes, an in-place write makes that copy stale, and the
// state must end on the host with a copy made after its last write.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "host_state_plan.h"
#include "planner/memory_layout.h"
#include "planner/plan_validator.h"
#include "planner/residency.h"
#include "planner/simulator.h"
#include "timeline_expect.h"

namespace memplan::planner {
namespace {

using test_util::buf_left_resident_schedule;
using test_util::host_plan;
using test_util::offload_buf_schedule;
using test_util::steps;

class InitialHost : public ::testing::Test {
 protected:
  ir::Graph g = test_util::host_state_graph();
  ir::TensorId id(const char* name) { return *g.find_tensor(name); }

  // The validator's verdict on `plan`, which must fail with `text` at `step`.
  static void expect_invalid(const Plan& plan, const ir::Graph& graph, std::int64_t step,
                             const std::string& text) {
    const Validation v = validate(graph, plan);
    EXPECT_FALSE(v.valid);
    EXPECT_EQ(v.step, step) << v.message;
    EXPECT_NE(v.message.find(text), std::string::npos) << v.message;
  }
};

TEST_F(InitialHost, ResidencyStartsTheTensorOnTheHostOnly) {
  const Plan plan = host_plan(g, offload_buf_schedule(g));
  Residency r(g, plan);
  EXPECT_FALSE(r.resident(id("buf")));
  EXPECT_TRUE(r.host_copy(id("buf")));
  EXPECT_TRUE(r.resident(id("x")));
  EXPECT_EQ(r.bytes_in_use(), 128u);  // x and w; buf takes no device bytes
  EXPECT_EQ(r.check(steps(g, {{"compute", "acc"}})[0]), "input 'buf' is not resident");
  EXPECT_EQ(r.check(steps(g, {{"swap_in", "buf"}})[0]), "");
  r.apply(steps(g, {{"swap_in", "buf"}})[0]);
  EXPECT_TRUE(r.resident(id("buf")));
  EXPECT_EQ(r.bytes_in_use(), 192u);
}

TEST_F(InitialHost, AnInPlaceWriteMakesTheHostCopyStale) {
  const Plan plan = host_plan(g, {});
  Residency r(g, plan);
  for (const Step& s : steps(g, {{"swap_in", "buf"}, {"compute", "mm"}, {"compute", "acc"}}))
    r.apply(s);
  EXPECT_FALSE(r.host_copy(id("buf")));
  EXPECT_EQ(r.last_write(id("buf")), *g.find_node("acc"));
  r.apply(steps(g, {{"free", "buf"}})[0]);
  EXPECT_EQ(r.check(steps(g, {{"swap_in", "buf"}})[0]),
            "'buf' has no current host copy: 'acc' wrote it after its last swap_out");
  // A tensor that never had a copy keeps the old message.
  r.apply(steps(g, {{"free", "a"}})[0]);
  EXPECT_EQ(r.check(steps(g, {{"swap_in", "a"}})[0]), "'a' has no host copy (no swap_out before)");
}

TEST_F(InitialHost, ASwapOutAfterTheWriteMakesTheCopyCurrentAgain) {
  Residency r(g, host_plan(g, {}));
  for (const Step& s : steps(g, {{"swap_in", "buf"},
                                 {"compute", "mm"},
                                 {"compute", "acc"},
                                 {"swap_out", "buf"},
                                 {"free", "buf"}}))
    r.apply(s);
  EXPECT_TRUE(r.host_copy(id("buf")));
  EXPECT_EQ(r.check(steps(g, {{"swap_in", "buf"}})[0]), "");
}

TEST_F(InitialHost, TheOffloadPlanIsValid) {
  const Plan plan = host_plan(g, offload_buf_schedule(g));
  const Validation v = validate(g, plan);
  EXPECT_TRUE(v.valid) << v.message;
  EXPECT_EQ(v.peak_bytes, 257u);  // x w buf a and the 1-byte flag
}

TEST_F(InitialHost, WithoutTheKeyTheSameScheduleFindsBufResident) {
  Plan plan = host_plan(g, offload_buf_schedule(g), {});
  expect_invalid(plan, g, 0, "step 0 (swap_in 'buf'): 'buf' is already resident");
}

TEST_F(InitialHost, ReadingItBeforeItsSwapInIsInvalid) {
  const Plan plan = host_plan(
      g, steps(g, {{"compute", "mm"}, {"compute", "acc"}, {"compute", "sum"}, {"free", "a"}}));
  expect_invalid(plan, g, 1, "step 1 (compute 'acc'): input 'buf' is not resident");
}

TEST_F(InitialHost, ResidentAtTheEndIsInvalid) {
  // buf brought in and written, then copied out but never freed.
  const Plan plan = host_plan(g, buf_left_resident_schedule(g));
  expect_invalid(plan, g, -1, "initial_host tensor 'buf' is resident at the end");
}

TEST_F(InitialHost, ACopyFromBeforeTheLastWriteIsInvalidAtTheEnd) {
  // The swap_out comes before acc writes buf: the host keeps the old values.
  const Plan plan = host_plan(g, steps(g, {{"swap_in", "buf"},
                                           {"compute", "mm"},
                                           {"swap_out", "buf"},
                                           {"compute", "acc"},
                                           {"free", "buf"},
                                           {"compute", "sum"},
                                           {"free", "a"}}));
  expect_invalid(plan, g, -1,
                 "initial_host tensor 'buf' has no host copy made after its last write ('acc')");
}

TEST_F(InitialHost, AStaleCopyCannotBeSwappedIn) {
  const Plan plan = host_plan(g, steps(g, {{"swap_in", "buf"},
                                           {"compute", "mm"},
                                           {"compute", "acc"},
                                           {"free", "buf"},
                                           {"swap_in", "buf"}}));
  expect_invalid(plan, g, 4,
                 "step 4 (swap_in 'buf'): 'buf' has no current host copy: 'acc' wrote it after "
                 "its last swap_out");
}

TEST_F(InitialHost, TheInitialStateCountsNoBytesForIt) {
  Plan plan = host_plan(g, offload_buf_schedule(g));
  plan.budget_bytes = 100;
  // x and w only: 128, not the 192 of every input.
  expect_invalid(plan, g, -1, "the initial state holds 128 bytes, over budget_bytes 100");
  plan.budget_bytes = 257;  // the plan's peak: fits exactly
  EXPECT_TRUE(validate(g, plan).valid) << validate(g, plan).message;
}

TEST_F(InitialHost, StructureIsChecked) {
  const Plan good = host_plan(g, offload_buf_schedule(g));
  auto with = [&](std::vector<ir::TensorId> on_host) {
    Plan p = good;
    p.initial_host = std::move(on_host);
    return p;
  };
  const auto tensors = static_cast<ir::TensorId>(g.tensors().size());
  expect_invalid(with({tensors}), g, -1,
                 "initial_host: tensor id " + std::to_string(tensors) + " is not in the graph");
  expect_invalid(with({id("a")}), g, -1,
                 "initial_host: tensor 'a' is not a graph input or initializer");
  expect_invalid(with({id("buf"), id("buf")}), g, -1, "initial_host: tensor 'buf' is listed twice");
  const ir::TensorId lo = std::min(id("x"), id("buf")), hi = std::max(id("x"), id("buf"));
  expect_invalid(with({hi, lo}), g, -1,
                 "initial_host: tensor '" + g.tensor(lo).name + "' is out of order");
}

TEST_F(InitialHost, AGraphOutputOrAnAliasCannotStartOnTheHost) {
  // w is a graph input that is also a graph output.
  test::ModelBuilder b;
  b.input("x", {std::int64_t{4}}).input("w", {std::int64_t{4}});
  b.node("Relu", {"x"}, {"y"}, "relu");
  b.output("y").output("w");
  const ir::Graph out_graph = ir::load_model(b.write("input_output"), {}).graph;
  Plan plan = test_util::plan_for(out_graph, steps(out_graph, {{"compute", "relu"}}));
  plan.initial_host = {*out_graph.find_tensor("w")};
  expect_invalid(plan, out_graph, -1,
                 "initial_host: tensor 'w' is a graph output, which must be resident at the end");

  // x declared an alias of w: steps name w, so x could never be swapped in.
  plan.initial_host = {*out_graph.find_tensor("x")};
  plan.alias_of.assign(out_graph.tensors().size(), ir::kNoTensor);
  plan.alias_of[*out_graph.find_tensor("x")] = *out_graph.find_tensor("w");
  plan.tensor_bytes[*out_graph.find_tensor("x")] = 0;
  expect_invalid(plan, out_graph, -1, "initial_host: tensor 'x' is an alias: steps name its base");
}

TEST_F(InitialHost, SimulatorStartsFromTheHostAndKeepsTheTimingRules) {
  // buf is 64 B: in 64/32 = 2 s, out 64/16 = 4 s. Memory starts at x + w = 128.
  const SimResult r = simulate(g, host_plan(g, offload_buf_schedule(g)));
  test_util::expect_timeline(
      r, {
             {Stream::kH2D, 0, 2, 192},          // 0 swap_in buf: no free before it -> [0,2]; +buf
             {Stream::kCompute, 0, 1, 256},      // 1 compute mm: x, w resident at 0; +a
             {Stream::kCompute, 2, 2.5, 257},    // 2 compute acc: waits for buf's swap_in; +flag
             {Stream::kD2H, 2, 6, 257},          // 3 swap_out buf: the step that made it resident
             {Stream::kCompute, 6, 6, 193},      // 4 free buf: waits for its swap_out; -buf
             {Stream::kCompute, 6, 6.5, 197},    // 5 compute sum; +loss
             {Stream::kCompute, 6.5, 6.5, 133},  // 6 free a
         });
  EXPECT_DOUBLE_EQ(r.iteration_seconds, 6.5);
  EXPECT_DOUBLE_EQ(r.compute_seconds, 2.0);
  EXPECT_EQ(r.peak_bytes, 257u);
}

TEST_F(InitialHost, LayoutAllocatesItAtItsSwapIn) {
  const Plan plan = host_plan(g, offload_buf_schedule(g));
  const MemoryLayout layout = compute_memory_layout(g, plan);
  std::vector<std::pair<std::int64_t, std::string>> made;
  for (const Allocation& a : layout.allocations) made.emplace_back(a.step, g.tensor(a.tensor).name);
  // x and w at the start; buf at step 0 (its swap_in), then a, flag, loss.
  EXPECT_EQ(made, (std::vector<std::pair<std::int64_t, std::string>>{
                      {-1, "x"}, {-1, "w"}, {0, "buf"}, {1, "a"}, {2, "flag"}, {5, "loss"}}));
  EXPECT_EQ(memory_layout_problem(g, plan, layout), "");
  EXPECT_EQ(layout.peak_bytes, 257u);

  // A layout made as if buf started resident is not this plan's.
  Plan resident = plan;
  resident.initial_host.clear();
  EXPECT_NE(memory_layout_problem(g, plan, compute_memory_layout(g, resident)), "");
}

}  // namespace
}  // namespace memplan::planner
