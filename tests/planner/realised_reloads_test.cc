// The reloads a schedule realises, priced back into the problem
// (planner/realised_reloads.h).
#include "planner/realised_reloads.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <optional>

#include "solvers/link_queue.h"
#include "solvers/problem_builder.h"
#include "two_held_graph.h"

namespace memplan::planner {
namespace {

using sched_test::decide;
using sched_test::two_held_graph;
using sched_test::unit_costs;

std::optional<std::size_t> candidate_of(const solvers::Problem& p, ir::TensorId t) {
  for (std::size_t i = 0; i < p.candidates.size(); ++i)
    if (p.candidates[i].tensor == t) return i;
  return std::nullopt;
}

struct SplitCase {
  ir::Graph graph = two_held_graph();
  ir::NodeCosts costs = unit_costs(graph);
  std::vector<Decision> decisions;
  ScheduleResult held, split;
  solvers::Problem problem;

  SplitCase() {
    costs.seconds[*graph.find_node("f0")] = 10.0;
    decisions = decide(graph, {{"a", Decision::kRecompute}, {"b", Decision::kSwap}});
    held = make_schedule(graph, costs, decisions, {});
    // 64 B less: a is split (b's 32 B cannot do it alone), so f0 runs twice.
    ScheduleOptions o;
    o.budget_bytes = held.peak_bytes - 64;
    split = make_schedule(graph, costs, decisions, o);
    problem = solvers::build_problem(graph, costs, o.budget_bytes, {});
  }
  std::size_t index(const char* tensor) const {
    return candidate_of(problem, *graph.find_tensor(tensor)).value();
  }
  std::vector<Decision> choice() const {
    std::vector<Decision> c(problem.candidates.size(), Decision::kKeep);
    c[index("a")] = Decision::kRecompute;
    c[index("b")] = Decision::kSwap;
    return c;
  }
};

TEST(RealisedReloads, CountsTheRunsOfASplitRecomputeAndASwapOnce) {
  SplitCase c;
  ASSERT_TRUE(c.split.fits) << c.split.diagnosis;
  const auto held = realised_reloads(c.graph, c.problem, c.held);
  const auto split = realised_reloads(c.graph, c.problem, c.split);
  ASSERT_EQ(held.size(), c.problem.candidates.size());
  EXPECT_EQ(held[c.index("a")], 1u);
  EXPECT_EQ(split[c.index("a")], 2u);
  EXPECT_EQ(split[c.index("b")], 1u);
  // Every candidate the schedule keeps counts once.
  for (std::size_t i = 0; i < split.size(); ++i) {
    if (i == c.index("a") || i == c.index("b")) continue;
    EXPECT_EQ(split[i], 1u) << i;
  }
}

TEST(RealisedReloads, PricesEachRecomputeAsOftenAsMade) {
  SplitCase c;
  std::vector<std::uint32_t> reloads(c.problem.candidates.size(), 1);
  reloads[c.index("a")] = 3;
  reloads[c.index("b")] = 2;
  const solvers::Problem priced = priced_with_reloads(c.problem, reloads);
  const solvers::Candidate &a0 = c.problem.candidates[c.index("a")],
                           &a1 = priced.candidates[c.index("a")];
  const solvers::Candidate &b0 = c.problem.candidates[c.index("b")],
                           &b1 = priced.candidates[c.index("b")];
  // f0's own 10 s twice more.
  EXPECT_DOUBLE_EQ(a1.recompute_seconds, a0.recompute_seconds + 2 * 10.0);
  // f1's 1 s once more; the copies are left as they were.
  EXPECT_DOUBLE_EQ(b1.recompute_seconds, b0.recompute_seconds + 1.0);
  EXPECT_DOUBLE_EQ(b1.swap_in_seconds, b0.swap_in_seconds);
  EXPECT_DOUBLE_EQ(b1.swap_exposed_seconds, b0.swap_exposed_seconds);
  // Counts of 1 leave the problem as it was.
  const std::vector<std::uint32_t> ones(c.problem.candidates.size(), 1);
  EXPECT_TRUE(priced_with_reloads(c.problem, ones) == c.problem);
}

TEST(RealisedReloads, TheObjectiveOfASplitPlanPaysTheSecondRecompute) {
  SplitCase c;
  const auto choice = c.choice();
  const double once = solvers::replayed_overhead_seconds(c.problem, choice);
  const double priced = solvers::replayed_overhead_seconds(
      priced_with_reloads(c.problem, realised_reloads(c.graph, c.problem, c.split)), choice);
  // f0's 10 s once more; b's copies are near free at 1 TB/s.
  EXPECT_NEAR(priced - once, 10.0, 1e-6);
}

}  // namespace
}  // namespace memplan::planner
