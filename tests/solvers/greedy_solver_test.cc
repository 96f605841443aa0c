#include "solvers/greedy_solver.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <tuple>

#include "random_problem.h"
#include "solvers/evictions.h"
#include "solvers/link_queue.h"
#include "solvers/model_eval.h"
#include "solvers/solver_registry.h"

namespace memplan::solvers {
namespace {

TEST(GreedySolver, FitsWheneverEvictingEverythingFits) {
  int checked = 0, skipped = 0;
  for (unsigned seed = 1; seed <= 20; ++seed) {
    Problem p = test::random_problem(seed, 40, 120, 0.7);
    std::vector<Decision> all(p.candidates.size());
    for (std::size_t i = 0; i < all.size(); ++i)
      all[i] = p.candidates[i].can_recompute ? Decision::kRecompute
               : p.candidates[i].can_swap    ? Decision::kSwap
                                             : Decision::kKeep;
    if (!evaluate(p, all).fits) {
      ++skipped;  // no assignment fits: nothing to find
      continue;
    }
    Solution s = GreedySolver().solve(p, {});
    EXPECT_EQ(s.status, SolveStatus::kHeuristic) << seed;
    EXPECT_TRUE(evaluate(p, s.choice).fits) << seed;
    // The budget is under the baseline peak, so fitting took evictions.
    ASSERT_LT(p.budget_bytes, p.baseline_peak()) << seed;
    EXPECT_GT(std::count_if(s.choice.begin(), s.choice.end(),
                            [](Decision d) { return d != Decision::kKeep; }),
              0)
        << seed;
    ++checked;
  }
  EXPECT_EQ(checked, 20);  // these seeds all fit when everything is evicted
  std::printf("%d problems fitted, %d where nothing fits\n", checked, skipped);
}

TEST(GreedySolver, ChoicesAreAllowedAndObjectiveMatchesTheModel) {
  Problem p = test::random_problem(11, 80, 300, 0.6);
  Solution s = GreedySolver().solve(p, {});
  for (std::size_t i = 0; i < s.choice.size(); ++i)
    EXPECT_TRUE(allowed(p.candidates[i], s.choice[i]));
  EXPECT_DOUBLE_EQ(s.objective_seconds, evaluate(p, s.choice).overhead_seconds);
}

// The recompute-only problem is the one mechanism: restricted, the heuristic
// never swaps, and it answers as the recompute-greedy baseline does.
TEST(GreedySolver, OnARecomputeOnlyProblemNeverSwaps) {
  Problem p = test::random_problem(12, 50, 200, 0.7);
  Problem only = p;
  restrict_evictions(only, Evictions::recompute_only());
  Solution s = GreedySolver().solve(only, {});
  for (auto d : s.choice) EXPECT_NE(d, Decision::kSwap);
  EXPECT_GT(std::count(s.choice.begin(), s.choice.end(), Decision::kRecompute), 0);
  EXPECT_TRUE(evaluate(p, s.choice).fits);
  EXPECT_EQ(s.choice, make_solver("recompute-greedy")->solve(p, {}).choice);
}

TEST(GreedySolver, SimulatorJudgedUndoOnlyAcceptsImprovements) {
  Problem p = test::random_problem(13, 30, 100, 0.8);
  SolverOptions o;
  int calls = 0;
  // A "simulator" that charges one second per evicted tensor: every undo
  // that keeps the plan feasible is an improvement.
  o.simulate = [&](const std::vector<Decision>& d) -> std::optional<double> {
    ++calls;
    return static_cast<double>(
        std::count_if(d.begin(), d.end(), [](Decision x) { return x != Decision::kKeep; }));
  };
  Solution with = GreedySolver().solve(p, o);
  Solution without = GreedySolver().solve(p, {});
  auto evicted = [](const Solution& s) {
    return std::count_if(s.choice.begin(), s.choice.end(),
                         [](Decision x) { return x != Decision::kKeep; });
  };
  EXPECT_GT(calls, 0);
  ASSERT_GT(evicted(without), 0);  // there was something to undo
  // Seed 13: the simulator's undos take 7 evictions down to 5.
  EXPECT_LT(evicted(with), evicted(without));
  EXPECT_TRUE(evaluate(p, with.choice).fits);
  std::printf("evicted with the simulator %ld, without %ld\n", static_cast<long>(evicted(with)),
              static_cast<long>(evicted(without)));
}

// The simulator's time for the choice handed out comes back with it, so the
// planner need not schedule and simulate that choice again: on the path
// with second opinions and on the main run alone (past
// kAlternativesMaxCandidates candidates).
TEST(GreedySolver, HandsOutTheSimulatedTimeOfItsChoice) {
  // A distinct time per choice: which candidates are evicted, and how.
  auto seconds_of = [](const std::vector<Decision>& d) {
    double t = 0;
    for (std::size_t i = 0; i < d.size(); ++i)
      t += static_cast<double>(d[i]) * static_cast<double>(i % 7 + 1);
    return t;
  };
  SolverOptions o;
  o.simulate = [&](const std::vector<Decision>& d) -> std::optional<double> {
    return seconds_of(d);
  };
  const int large = static_cast<int>(GreedySolver::kAlternativesMaxCandidates) + 1;
  for (const auto& [seed, candidates, steps] :
       {std::tuple{3U, 40, 120}, std::tuple{5U, 60, 160}, std::tuple{7U, large, 4 * large}}) {
    Problem p = test::random_problem(seed, candidates, steps, 0.7);
    const Solution s = GreedySolver().solve(p, o);
    ASSERT_TRUE(evaluate(p, s.choice).fits) << seed;
    ASSERT_TRUE(s.simulated_seconds.has_value()) << seed;
    EXPECT_EQ(*s.simulated_seconds, seconds_of(s.choice)) << seed;
  }
  // Without a simulator there is nothing to hand out.
  EXPECT_FALSE(GreedySolver().solve(test::random_problem(3, 40, 120, 0.7), {}).simulated_seconds);
}

// One large tensor that is nearly free to recompute, four that can only be
// swapped, four that can only be recomputed (dearly); the link hides one
// second of copies each way. Unpriced, the large tensor takes the whole link
// and the dear recomputes cover the rest (0.4 s); with the link priced, the
// large one is recomputed and the swap-only four use the link (0.01 s).
Problem link_contest() {
  Problem p;
  p.step_bytes.assign(10, 0);
  p.step_seconds.assign(10, 0.2);
  p.forward_seconds = p.backward_seconds = 1.0;
  p.baseline_seconds = 2.0;
  auto add = [&](std::uint64_t bytes, double link, double recompute) {
    Candidate c;
    c.tensor = static_cast<std::uint32_t>(p.candidates.size());
    c.bytes = bytes;
    c.made = 0;
    c.last_forward_use = 1;
    c.first_backward_use = 9;
    c.swap_gap = c.recompute_gap = {2, 8};
    c.swap_out_seconds = c.swap_in_seconds = link;
    c.recompute_seconds = recompute;
    c.can_swap = link > 0;
    c.can_recompute = recompute > 0;
    for (std::size_t s = 2; s <= 8; ++s) p.step_bytes[s] += bytes;  // the gap only
    p.candidates.push_back(c);
  };
  add(100, 1.0, 0.01);
  for (int k = 0; k < 4; ++k) add(25, 0.25, 0);
  for (int k = 0; k < 4; ++k) add(25, 0, 0.1);
  p.budget_bytes = p.baseline_peak() - 200;
  return p;
}

// The first fill and the model's local search only: the replay-judged moves
// after them trade a swap for a dear recompute here (the hand-made budget
// leaves no room for a free to wait on its copy), which the last lines check.
TEST(GreedySolver, ALinkPriceLeavesTheLinkToWhatCannotBeRecomputed) {
  const Problem p = link_contest();
  GreedySolver::Config model_only;
  model_only.replayed_exchanges = 0;
  const Solution s = GreedySolver(model_only).solve(p, {});
  ASSERT_TRUE(evaluate(p, s.choice).fits);
  EXPECT_EQ(s.choice[0], Decision::kRecompute);
  int checked = 1;
  for (std::size_t i = 1; i <= 4; ++i, ++checked) EXPECT_EQ(s.choice[i], Decision::kSwap) << i;
  // 0.01 s in the model; reported with the link replayed, where this
  // hand-made budget leaves no room for a free to wait on its copy.
  EXPECT_NEAR(evaluate(p, s.choice).overhead_seconds, 0.01, 1e-9);
  EXPECT_NEAR(s.objective_seconds, replayed_overhead_seconds(p, s.choice), 1e-12);
  const Solution full = GreedySolver().solve(p, {});
  EXPECT_TRUE(evaluate(p, full.choice).fits);
  EXPECT_EQ(full.choice[0], Decision::kRecompute);
  EXPECT_LT(full.objective_seconds, s.objective_seconds);
  std::printf("reported objective %.4f s with the replayed moves, %.4f s without\n",
              full.objective_seconds, s.objective_seconds);
  EXPECT_EQ(checked, 5);
}

// A "simulator" under which no plan with a swap fits: the recompute-only
// second opinion replaces the main run's answer, which the solution keeps
// for budget tightening to follow.
TEST(GreedySolver, ASecondOpinionThatReplacesTheAnswerKeepsTheOwnAnswer) {
  int replaced = 0;
  for (unsigned seed = 1; seed <= 20; ++seed) {
    Problem p = test::random_problem(seed, 40, 120, 0.7);
    SolverOptions o;
    o.simulate = [](const std::vector<Decision>& d) -> std::optional<double> {
      if (std::count(d.begin(), d.end(), Decision::kSwap) > 0) return std::nullopt;
      return 1.0;
    };
    const Solution s = GreedySolver().solve(p, o);
    if (s.own_choice.empty()) continue;  // the main run swapped nothing
    ++replaced;
    EXPECT_EQ(std::count(s.choice.begin(), s.choice.end(), Decision::kSwap), 0) << seed;
    EXPECT_GT(std::count(s.own_choice.begin(), s.own_choice.end(), Decision::kSwap), 0) << seed;
    EXPECT_NE(s.note.find("simulated fastest"), std::string::npos) << seed;
  }
  EXPECT_GE(replaced, 5);
}

// The local search judged by the replayed objective takes a move only where
// that objective drops: with it the reported objective is never higher than
// without, the plan still fits, and on some of these seeds it is lower. The
// copies are made 40 times slower, so that they queue on the link.
TEST(GreedySolver, ReplayedExchangesOnlyLowerTheReportedObjective) {
  int checked = 0, lower = 0;
  GreedySolver::Config without;
  without.replayed_exchanges = 0;
  for (unsigned seed = 1; seed <= 30; ++seed) {
    Problem p = test::random_problem(seed, 60, 160, 0.6);
    for (Candidate& c : p.candidates) {
      c.swap_out_seconds *= 40;
      c.swap_in_seconds *= 40;
    }
    const Solution a = GreedySolver(without).solve(p, {});
    if (!evaluate(p, a.choice).fits) continue;
    const Solution b = GreedySolver().solve(p, {});
    EXPECT_TRUE(evaluate(p, b.choice).fits) << seed;
    EXPECT_LE(b.objective_seconds, a.objective_seconds + 1e-12) << seed;
    EXPECT_NEAR(b.objective_seconds, replayed_overhead_seconds(p, b.choice), 1e-12) << seed;
    lower += b.objective_seconds < a.objective_seconds - 1e-12 ? 1 : 0;
    ++checked;
  }
  EXPECT_GE(checked, 20);
  EXPECT_GE(lower, 1);
  std::printf("%d problems, %d with a lower objective\n", checked, lower);
}

}  // namespace
}  // namespace memplan::solvers
