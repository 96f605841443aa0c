#include "solvers/ilp_solver.h"

#include <gtest/gtest.h>

#include <optional>

#include "random_problem.h"
#include "solvers/coarsen.h"
#include "solvers/greedy_solver.h"
#include "solvers/link_queue.h"
#include "solvers/model_eval.h"

namespace memplan::solvers {
namespace {

// The best assignment by trying all 3^n (the model's ground truth).
std::optional<double> exhaustive_optimum(const Problem& p) {
  const std::size_t n = p.candidates.size();
  std::vector<Decision> choice(n, Decision::kKeep);
  std::optional<double> best;
  std::size_t total = 1;
  for (std::size_t i = 0; i < n; ++i) total *= 3;
  for (std::size_t code = 0; code < total; ++code) {
    std::size_t c = code;
    bool ok = true;
    for (std::size_t i = 0; i < n; ++i, c /= 3) {
      choice[i] = static_cast<Decision>(c % 3);
      ok = ok && allowed(p.candidates[i], choice[i]);
    }
    if (!ok) continue;
    ModelEval e = evaluate(p, choice);
    if (e.fits && (!best || e.overhead_seconds < *best)) best = e.overhead_seconds;
  }
  return best;
}

class SmallProblems : public ::testing::TestWithParam<unsigned> {};

// The ILP's answer on `p` against enumeration: the same optimum, or both
// infeasible. Returns the ILP's choice when there is an optimum to check.
std::optional<std::vector<Decision>> expect_enumerated_optimum(const Problem& p, double fraction) {
  auto truth = exhaustive_optimum(p);
  Solution s = IlpSolver().solve(p, {});
  if (!truth) {
    EXPECT_EQ(s.status, SolveStatus::kInfeasible) << "fraction " << fraction;
    return std::nullopt;
  }
  if (s.status != SolveStatus::kOptimal) {
    ADD_FAILURE() << "status " << to_string(s.status) << ": " << s.note;
    return std::nullopt;
  }
  // Optimal for the model; reported with the link replayed (link_queue.h).
  ModelEval e = evaluate(p, s.choice);
  EXPECT_TRUE(e.fits);
  EXPECT_NEAR(e.overhead_seconds, *truth, 1e-9) << "fraction " << fraction;
  EXPECT_NEAR(s.objective_seconds, replayed_overhead_seconds(p, s.choice), 1e-12);
  return s.choice;
}

TEST_P(SmallProblems, IlpOptimumEqualsExhaustiveEnumeration) {
  int optima = 0, infeasible = 0;
  for (double fraction : {0.9, 0.75, 0.6}) {
    if (expect_enumerated_optimum(test::random_problem(GetParam(), 10, 40, fraction), fraction))
      ++optima;
    else
      ++infeasible;
  }
  // These seeds have an optimum at all three budgets (a seed that lost one
  // would check less: counted, so that it shows).
  EXPECT_EQ(optima, 3);
  std::printf("seed %u: %d optima compared, %d budgets infeasible for both\n", GetParam(), optima,
              infeasible);
}

// The same with chain holds priced in time (Problem::holds_cost_time): a
// recomputed input that a recomputed reader's chain reads costs its
// recompute once more instead of bytes.
TEST_P(SmallProblems, IlpOptimumEqualsEnumerationWithHoldsPricedInTime) {
  int checked = 0, priced = 0;
  for (double fraction : {0.9, 0.6, 0.45, 0.35, 0.3}) {
    Problem p = test::random_problem(GetParam(), 10, 40, fraction);
    p.holds_cost_time = true;
    const auto choice = expect_enumerated_optimum(p, fraction);
    if (!choice) continue;
    for (const auto& [first, end] : hold_groups(p))
      priced += hold_seconds(p, first, end, *choice) > 0;
    ++checked;
  }
  EXPECT_GT(checked, 0);
  RecordProperty("priced_holds", priced);
}

TEST_P(SmallProblems, NoHeuristicBeatsTheIlpBound) {
  int compared = 0, infeasible = 0;
  for (bool priced : {false, true}) {
    for (double fraction : {0.95, 0.8, 0.65}) {
      Problem p = test::random_problem(GetParam() + 100, 12, 60, fraction);
      p.holds_cost_time = priced;
      Solution ilp = IlpSolver().solve(p, {});
      Solution greedy = GreedySolver().solve(p, {});
      if (ilp.status == SolveStatus::kInfeasible) {
        ++infeasible;
        continue;
      }
      ASSERT_TRUE(ilp.bound_seconds.has_value());
      if (greedy.status == SolveStatus::kHeuristic) {
        EXPECT_TRUE(evaluate(p, greedy.choice).fits);
        EXPECT_GE(greedy.objective_seconds, *ilp.bound_seconds - 1e-9) << "priced " << priced;
        ++compared;
      }
    }
  }
  EXPECT_EQ(compared, 6);  // every budget: the ILP and the heuristic both fit
  std::printf("seed %u: %d heuristic plans against the bound, %d budgets infeasible\n", GetParam(),
              compared, infeasible);
}

INSTANTIATE_TEST_SUITE_P(Seeds, SmallProblems, ::testing::Range(1u, 9u));

TEST(IlpSolver, WarmStartIsNeverWorsened) {
  Problem p = test::random_problem(42, 60, 200, 0.6);
  Solution greedy = GreedySolver().solve(p, {});
  ASSERT_EQ(greedy.status, SolveStatus::kHeuristic);
  SolverOptions o;
  o.warm_start = greedy.choice;
  o.time_limit_seconds = 2;
  Solution ilp = IlpSolver().solve(p, o);
  EXPECT_TRUE(evaluate(p, ilp.choice).fits);
  EXPECT_LE(ilp.objective_seconds, greedy.objective_seconds + 1e-12);
}

TEST(IlpSolver, ReportsInfeasibleBudgets) {
  Problem p = test::random_problem(7, 8, 30, 0.01);
  Solution s = IlpSolver().solve(p, {});
  EXPECT_EQ(s.status, SolveStatus::kInfeasible);
}

TEST(IlpSolver, FitsAlreadyMeansKeepEverything) {
  Problem p = test::random_problem(3, 8, 30, 1.0);
  Solution s = IlpSolver().solve(p, {});
  EXPECT_EQ(s.status, SolveStatus::kOptimal);
  EXPECT_EQ(s.objective_seconds, 0.0);
  for (auto d : s.choice) EXPECT_EQ(d, Decision::kKeep);
}

}  // namespace
}  // namespace memplan::solvers

namespace memplan::solvers {
namespace {

TEST(IlpSolver, CoarsensLargeProblemsAndSaysSo) {
  Problem p = test::random_problem(21, 300, 600, 0.7);
  Solution s = IlpSolver(100).solve(p, {});
  EXPECT_NE(s.note.find("coarsened"), std::string::npos) << s.note;
  EXPECT_FALSE(s.bound_seconds.has_value());
  if (s.status != SolveStatus::kInfeasible) {
    EXPECT_EQ(s.status, SolveStatus::kFeasible);
    EXPECT_TRUE(evaluate(p, s.choice).fits);
  }
}

TEST(Coarsen, FeasibleCoarseAssignmentsAreFeasibleFineOnes) {
  Problem p = test::random_problem(22, 120, 400, 0.8);
  Coarsened c = coarsen(p, 20);
  EXPECT_LE(c.problem.candidates.size(), 120u);
  std::size_t members = 0;
  for (const auto& m : c.members) members += m.size();
  EXPECT_EQ(members, p.candidates.size());
  std::vector<Decision> all(c.problem.candidates.size());
  for (std::size_t g = 0; g < all.size(); ++g)
    all[g] = c.problem.candidates[g].can_recompute ? Decision::kRecompute
             : c.problem.candidates[g].can_swap    ? Decision::kSwap
                                                   : Decision::kKeep;
  ModelEval coarse = evaluate(c.problem, all);
  ModelEval fine = evaluate(p, expand(c, all, p.candidates.size()));
  // Groups free only where all members do: the fine peak is never higher.
  EXPECT_LE(fine.peak_bytes, coarse.peak_bytes);
}

TEST(Coarsen, MixingOptionsMergesMoreAndStaysFeasible) {
  Problem p = test::random_problem(22, 120, 400, 0.8);
  Coarsened plain = coarsen(p, 20);
  Coarsened mixed = coarsen(p, 20, true);
  EXPECT_LT(mixed.problem.candidates.size(), plain.problem.candidates.size());
  std::vector<Decision> all(mixed.problem.candidates.size());
  for (std::size_t g = 0; g < all.size(); ++g) {
    const Candidate& group = mixed.problem.candidates[g];
    // A group offers only what every member allows.
    for (std::size_t m : mixed.members[g]) {
      EXPECT_TRUE(!group.can_swap || p.candidates[m].can_swap);
      EXPECT_TRUE(!group.can_recompute || p.candidates[m].can_recompute);
    }
    all[g] = group.can_recompute ? Decision::kRecompute
             : group.can_swap    ? Decision::kSwap
                                 : Decision::kKeep;
  }
  std::vector<Decision> fine_choice = expand(mixed, all, p.candidates.size());
  for (std::size_t i = 0; i < fine_choice.size(); ++i)
    EXPECT_TRUE(allowed(p.candidates[i], fine_choice[i]));
  EXPECT_LE(evaluate(p, fine_choice).peak_bytes, evaluate(mixed.problem, all).peak_bytes);
}

}  // namespace
}  // namespace memplan::solvers
