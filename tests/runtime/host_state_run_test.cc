// Plans that keep training state on the host between iterations
// (PLAN_FORMAT's `initial_host`, PlanRequest::StateOnHost::kAlways), made
// by the planner on real graphs, with and without ONNX Runtime's AdamW step:
// valid, below the floor of plans that keep state resident at the ends of
// the iteration, and run on the host backend without an integrity error
// (every in-place write copied out again before its tensor leaves).
#include <gtest/gtest.h>

#include <ostream>

#include "planner/plan_validator.h"
#include "planner/reachable_floor.h"
#include "runtime_test_util.h"

namespace memplan::runtime {
namespace {

using planner::PlanRequest;

struct Case {
  test_util::Fixture fixture;
  bool adamw = false;
};

void PrintTo(const Case& c, std::ostream* os) {
  *os << c.fixture.name << (c.adamw ? " + AdamW" : "");
}

test_util::Loaded load(const Case& c) {
  if (!c.adamw) return test_util::load_fixture(c.fixture);
  ir::LoadOptions o;
  o.dims = c.fixture.dims;
  const std::string base = std::string(MEMPLAN_FIXTURES) + "/" + c.fixture.name;
  test_util::Loaded l;
  l.graph = ir::load_model(base + ".training.onnx", base + ".optimizer.onnx", o).graph;
  std::vector<std::string> warnings;
  l.costs = ir::make_node_costs(l.graph, ir::device_preset("a100-40gb"), {}, "roofline a100-40gb",
                                warnings);
  l.baseline_peak = ir::baseline_memory(l.graph, ir::Liveness(l.graph)).peak_bytes;
  return l;
}

class HostStateRun : public ::testing::TestWithParam<Case> {};

TEST_P(HostStateRun, BelowTheResidentFloorAndRunsClean) {
  const test_util::Loaded l = load(GetParam());
  const auto planned = test_util::plan_fixture(l, "greedy", PlanRequest::StateOnHost::kAlways);
  const planner::Plan& plan = planned.plan;
  ASSERT_FALSE(plan.initial_host.empty());
  const planner::Validation v = planner::validate(l.graph, plan);
  ASSERT_TRUE(v.valid) << v.message;
  // Parameters and gradients leave between iterations: these graphs are
  // mostly state at these dims, so the plan goes below what any plan that
  // keeps state resident at the ends can reach.
  const std::uint64_t resident_floor =
      planner::smallest_reachable_peak(l.graph, l.costs, solvers::Evictions::both());
  EXPECT_LT(plan.predicted.peak_bytes, resident_floor);

  ASSERT_TRUE(plan.memory_layout.has_value());
  EXPECT_LE(plan.memory_layout->arena_bytes, plan.budget_bytes);
  const RunReport r = test_util::run_host(l.graph, plan, *plan.memory_layout);
  EXPECT_EQ(r.integrity_errors(), 0u) << (r.first_errors.empty() ? "" : r.first_errors[0].what);
  EXPECT_GT(r.checks, plan.schedule.size() / 4);
}

const test_util::Fixture kMlp{"mlp", {{"batch", 2}}};
const test_util::Fixture kGpt2{"gpt2_small", {{"batch", 1}, {"seq", 32}}};

INSTANTIATE_TEST_SUITE_P(Fixtures, HostStateRun,
                         ::testing::Values(Case{kMlp, false}, Case{kMlp, true}, Case{kGpt2, false},
                                           Case{kGpt2, true}),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return info.param.fixture.name + (info.param.adamw ? "_adamw" : "");
                         });

}  // namespace
}  // namespace memplan::runtime
