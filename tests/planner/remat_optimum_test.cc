// memplan's recompute-only plans against the exact optimum (Checkmate's
// MILP, itself checked against an enumeration in tests/solvers): on a
// uniform chain, a residual block and a two-branch attention, at every
// budget down to the smallest the MILP can schedule. A plan may cost more
// than the optimum but never less: the two memory models must agree.
#include <gtest/gtest.h>

#include <cstdio>

#include "planner/plan_search.h"
#include "solvers/remat_milp.h"
#include "support/small_dags.h"
#include "uniform_chain.h"

namespace memplan::planner {
namespace {

struct Tally {
  int optimal = 0;   // budgets the MILP proved
  int planned = 0;   // of those, budgets memplan's plan fits
  double worst = 1;  // the largest plan / optimum ratio of recompute time
};

double recompute_seconds(const Plan& plan, const ir::NodeCosts& costs) {
  double s = 0;
  for (const Step& st : plan.schedule)
    if (st.op == StepOp::kRecompute) s += costs.seconds[st.id];
  return s;
}

Tally compare_with_optimum(const ir::Graph& g, const ir::NodeCosts& costs,
                           std::uint64_t value_bytes, const char* label) {
  const solvers::RematProblem top = solvers::remat_problem(g, costs, UINT64_MAX);
  Tally t;
  for (std::size_t values = top.nodes.size(); values >= 2; --values) {
    const std::uint64_t budget = top.base_bytes + values * value_bytes + 64;
    const solvers::RematSchedule best =
        solve_remat_milp(solvers::remat_problem(g, costs, budget), {});
    if (best.status != solvers::SolveStatus::kOptimal) break;
    ++t.optimal;
    const double optimum = best.seconds - top.compute_seconds();
    PlanRequest req;
    req.budget_bytes = budget;
    req.evictions = solvers::Evictions::recompute_only();
    req.time_limit_seconds = 5;
    const PlanOutcome out = search_plan(g, costs, req);
    if (!out.fits) {
      std::printf("%s, %zu values: optimum %.3g us, no plan\n", label, values, optimum * 1e6);
      continue;
    }
    ++t.planned;
    const double mine = recompute_seconds(out.plan, costs);
    EXPECT_GE(mine, optimum - 1e-12) << label << ", " << values << " values";
    if (optimum > 0) t.worst = std::max(t.worst, mine / optimum);
    std::printf("%s, %zu values: optimum %.3g us, memplan %.3g us\n", label, values, optimum * 1e6,
                mine * 1e6);
  }
  return t;
}

// At least `optimal` budgets proved by the MILP and `planned` of them met.
void expect_tally(const Tally& t, int optimal, int planned) {
  EXPECT_GE(t.optimal, optimal);
  EXPECT_GE(t.planned, planned);
  ::testing::Test::RecordProperty("worst_ratio_x1000", static_cast<int>(t.worst * 1000));
}

TEST(RematOptimum, PlansOnAUniformChainCostNoLessThanTheOptimum) {
  const test_util::Chain c = test_util::uniform_chain(10, 1 << 12);
  expect_tally(compare_with_optimum(c.graph, c.costs, c.state_bytes, "chain 10"), 8, 6);
}

TEST(RematOptimum, PlansOnAResidualBlockCostNoLessThanTheOptimum) {
  const test::SmallDag d = test::residual_block(1 << 12);
  expect_tally(compare_with_optimum(d.graph, d.costs, d.value_bytes, "residual block"), 6, 4);
}

TEST(RematOptimum, PlansOnATwoBranchAttentionCostNoLessThanTheOptimum) {
  const test::SmallDag d = test::two_branch_attention(1 << 12);
  expect_tally(compare_with_optimum(d.graph, d.costs, d.value_bytes, "attention"), 8, 4);
}

}  // namespace
}  // namespace memplan::planner
