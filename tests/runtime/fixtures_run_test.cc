// The host backend on real training graphs, planned at 50 % of the baseline
// peak (or just above the smallest reachable peak, where 50 % cannot be met)
// by the heuristic, the ILP and swap-only (vDNN): no integrity error, a
// layout within the budget, and measured bytes within 5 % of the planned peak. Then the same plans
// broken on purpose (validation is skipped: validate() would reject them) must report integrity
// errors instead of passing. No timing is asserted.
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <ostream>

#include "planner/memory_layout.h"
#include "planner/plan_validator.h"
#include "runtime-stub/executor.h"
#include "runtime-stub/host_backend.h"
#include "runtime_test_util.h"

namespace memplan::runtime {
namespace {

using planner::Plan;
using planner::Step;
using planner::StepOp;
using test_util::Fixture;

using test_util::run_host;

struct Case {
  Fixture fixture;
  const char* solver;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.fixture.name << " " << c.solver; }

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  return info.param.fixture.name + "_" + info.param.solver;
}

class FixtureRun : public ::testing::TestWithParam<Case> {};

TEST_P(FixtureRun, NoIntegrityErrorsAndArenaNearThePeak) {
  const Case& c = GetParam();
  const auto loaded = test_util::load_fixture(c.fixture);
  const auto planned = test_util::plan_fixture(loaded, c.solver);
  const Plan& plan = planned.plan;
  ASSERT_TRUE(planner::validate(loaded.graph, plan).valid);
  const planner::MemoryLayout layout = planner::compute_memory_layout(loaded.graph, plan);
  EXPECT_EQ(planner::memory_layout_problem(loaded.graph, plan, layout), "");
  ASSERT_TRUE(plan.memory_layout.has_value());
  EXPECT_EQ(*plan.memory_layout, layout);
  EXPECT_LE(layout.arena_bytes, plan.budget_bytes);  // PLAN_FORMAT: the arena fits the budget

  const RunReport r = run_host(loaded.graph, plan, layout);
  EXPECT_EQ(r.integrity_errors(), 0u) << (r.first_errors.empty() ? "" : r.first_errors[0].what);
  EXPECT_GE(r.memory.allocated_bytes, layout.arena_bytes);
  // The top allocation is used to its last byte, not to its rounded end.
  ASSERT_TRUE(r.touched_bytes.has_value());
  EXPECT_LE(*r.touched_bytes, layout.arena_bytes);
  EXPECT_GT(*r.touched_bytes, layout.arena_bytes - layout.alignment);
  EXPECT_EQ(r.measured_bytes(), *r.touched_bytes);
  EXPECT_LE(static_cast<double>(r.measured_bytes()),
            1.05 * static_cast<double>(plan.predicted.peak_bytes))
      << "budget " << planned.budget_fraction << " of the baseline peak";
  EXPECT_GT(r.checks, plan.schedule.size() / 4);
}

// bert_base and gpt2_small at seq 32: their parameters and gradients set
// the arena (1.2 and 1.4 GiB); the ILP runs on the two smaller graphs only,
// to keep the suite short.
const Fixture kMlp{"mlp", {{"batch", 2}}};
const Fixture kResnet{"resnet50", {{"batch", 1}}};
const Fixture kBert{"bert_base", {{"batch", 1}, {"seq", 32}}};
const Fixture kGpt2{"gpt2_small", {{"batch", 1}, {"seq", 32}}};

INSTANTIATE_TEST_SUITE_P(Fixtures, FixtureRun,
                         ::testing::Values(Case{kMlp, "greedy"}, Case{kMlp, "ilp"},
                                           Case{kMlp, "vdnn"}, Case{kResnet, "greedy"},
                                           Case{kResnet, "ilp"}, Case{kResnet, "vdnn"},
                                           Case{kBert, "greedy"}, Case{kBert, "vdnn"},
                                           Case{kGpt2, "greedy"}, Case{kGpt2, "vdnn"}),
                         case_name);

// A plan with swaps and recomputes to break.
struct Broken {
  test_util::Loaded loaded;
  Plan plan;
};

Broken resnet_plan(const char* solver) {
  Broken b{test_util::load_fixture(kResnet), {}};
  b.plan = test_util::plan_fixture(b.loaded, solver).plan;
  b.plan.memory_layout.reset();  // the tests edit the schedule; run_host lays it out again
  return b;
}

std::optional<std::size_t> first_step(const Plan& plan, StepOp op) {
  for (std::size_t i = 0; i < plan.schedule.size(); ++i)
    if (plan.schedule[i].op == op) return i;
  return std::nullopt;
}

TEST(BrokenPlan, DroppedSwapInIsAnIntegrityError) {
  Broken b = resnet_plan("vdnn");
  auto at = first_step(b.plan, StepOp::kSwapIn);
  ASSERT_TRUE(at.has_value()) << "the swap-only plan swaps nothing";
  b.plan.schedule.erase(b.plan.schedule.begin() + static_cast<std::ptrdiff_t>(*at));
  ASSERT_FALSE(planner::validate(b.loaded.graph, b.plan).valid);  // why validation is skipped
  const RunReport r = run_host(b.loaded.graph, b.plan);
  EXPECT_GE(r.wrong_bytes + r.freed_reads, 1u);
}

TEST(BrokenPlan, DroppedRecomputeIsAnIntegrityError) {
  Broken b = resnet_plan("greedy");
  auto at = first_step(b.plan, StepOp::kRecompute);
  if (!at) GTEST_SKIP() << "the greedy plan recomputes nothing";
  b.plan.schedule.erase(b.plan.schedule.begin() + static_cast<std::ptrdiff_t>(*at));
  const RunReport r = run_host(b.loaded.graph, b.plan);
  EXPECT_GE(r.integrity_errors(), 1u);
}

TEST(BrokenPlan, EarlyFreeIsAnIntegrityError) {
  Broken b = resnet_plan("greedy");
  const ir::Graph& g = b.loaded.graph;
  // The first compute whose output is read by a later step and freed:
  // move that free to right after the compute.
  for (std::size_t i = 0; i < b.plan.schedule.size(); ++i) {
    const Step s = b.plan.schedule[i];
    if (s.op != StepOp::kCompute) continue;
    for (ir::TensorId out : g.node(s.id).outputs) {
      if (g.tensor(out).consumers.empty() || b.plan.tensor_bytes[out] == 0) continue;
      auto free = std::find(b.plan.schedule.begin() + static_cast<std::ptrdiff_t>(i),
                            b.plan.schedule.end(), Step{StepOp::kFree, out});
      if (free == b.plan.schedule.end()) continue;
      b.plan.schedule.erase(free);
      b.plan.schedule.insert(b.plan.schedule.begin() + static_cast<std::ptrdiff_t>(i) + 1,
                             Step{StepOp::kFree, out});
      const RunReport r = run_host(g, b.plan);
      EXPECT_GE(r.freed_reads + r.wrong_bytes, 1u);
      ASSERT_FALSE(r.first_errors.empty());
      EXPECT_EQ(r.first_errors[0].tensor, g.tensor(out).name);
      return;
    }
  }
  FAIL() << "no tensor to free early";
}

}  // namespace
}  // namespace memplan::runtime
