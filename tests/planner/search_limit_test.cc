// PlanRequest::deadline: once the search's ILP time is spent, no ILP solve
// starts, and what is handed out is still valid and never slower than the
// heuristic's plan. Deadlines here are already past (or an hour away), so
// nothing depends on how fast the machine is.
#include <gtest/gtest.h>

#include <chrono>

#include "ir/baseline_memory.h"
#include "ir/liveness.h"
#include "planner/plan_search.h"
#include "support/fixture_graph.h"

namespace memplan::planner {
namespace {

using Clock = std::chrono::steady_clock;

struct Mlp {
  test::FixtureGraph f;
  std::uint64_t peak = 0;
};

Mlp mlp() {
  Mlp m{test::load_fixture("mlp.training.onnx", {{"batch", 64}}, "a100-40gb")};
  m.peak = ir::baseline_memory(m.f.graph, ir::Liveness(m.f.graph)).peak_bytes;
  return m;
}

PlanOutcome search(const Mlp& m, const std::string& solver, std::uint64_t percent,
                   std::optional<Clock::time_point> deadline) {
  PlanRequest req;
  req.budget_bytes = m.peak * percent / 100;
  req.solver = solver;
  req.deadline = deadline;
  return search_plan(m.f.graph, m.f.costs, req);
}

TEST(SearchLimit, ASpentLimitStillNeverLosesToTheHeuristic) {
  const Mlp m = mlp();
  const auto past = Clock::now() - std::chrono::seconds(1);
  int checked = 0;
  for (std::uint64_t percent : {80, 60}) {
    const PlanOutcome greedy = search(m, "greedy", percent, past);
    ASSERT_TRUE(greedy.fits) << percent;
    EXPECT_FALSE(greedy.ilp_cut_short) << "the heuristic is never cut short";
    for (const char* solver : {"ilp", "auto"}) {
      const PlanOutcome cut = search(m, solver, percent, past);
      EXPECT_TRUE(cut.fits) << solver << " " << percent;
      EXPECT_TRUE(cut.ilp_cut_short) << solver << " " << percent;
      EXPECT_NE(cut.note.find("time limit was spent"), std::string::npos) << cut.note;
      EXPECT_LE(cut.plan.predicted.iteration_seconds, greedy.plan.predicted.iteration_seconds)
          << solver << " " << percent;
      ++checked;
    }
  }
  EXPECT_EQ(checked, 4);
}

// With time to spare the deadline changes nothing: the same plan as
// without one.
TEST(SearchLimit, ADistantDeadlineChangesNothing) {
  const Mlp m = mlp();
  const PlanOutcome free = search(m, "auto", 60, std::nullopt);
  const PlanOutcome limited = search(m, "auto", 60, Clock::now() + std::chrono::hours(1));
  EXPECT_FALSE(limited.ilp_cut_short);
  EXPECT_FALSE(free.ilp_cut_short);
  EXPECT_EQ(free.solver_used, limited.solver_used);
  EXPECT_EQ(free.plan.decisions, limited.plan.decisions);
  EXPECT_EQ(free.plan.predicted.iteration_seconds, limited.plan.predicted.iteration_seconds);
}

// PlanRequest::solve_seconds_sum counts every solve, so it is never less
// than what the plan handed out says its own solves took.
TEST(SearchLimit, TheSolveSumCoversThePlansOwnSolves) {
  const Mlp m = mlp();
  int checked = 0;
  for (const char* solver : {"greedy", "ilp", "auto"}) {
    double sum = 0;
    PlanRequest req;
    req.budget_bytes = m.peak * 60 / 100;
    req.solver = solver;
    req.solve_seconds_sum = &sum;
    const PlanOutcome out = search_plan(m.f.graph, m.f.costs, req);
    ASSERT_TRUE(out.fits) << solver;
    EXPECT_GT(sum, 0.0) << solver;
    EXPECT_GE(sum + 1e-9, out.plan.solver.solve_seconds) << solver;
    ++checked;
  }
  EXPECT_EQ(checked, 3);
}

}  // namespace
}  // namespace memplan::planner
