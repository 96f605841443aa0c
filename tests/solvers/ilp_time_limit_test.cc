// The ILP's time limit and its one-go matrix. No assertion here depends on
// how fast the machine is: a limit of 1 ms is spent before Cbc could finish
// anything on these problems, and what is checked is the answer's shape
// (valid, feasible, labelled time_limit), never a duration.
#include <gtest/gtest.h>

#include <chrono>
#include <limits>
#include <map>

#include "random_problem.h"
#include "solvers/greedy_solver.h"
#include "solvers/ilp_model.h"
#include "solvers/ilp_solver.h"
#include "solvers/link_queue.h"
#include "solvers/model_eval.h"

namespace memplan::solvers {
namespace {

constexpr double kTiny = 1e-3;  // seconds

// The program as the row-by-row construction defined it (docs/model.md):
// (row, column) -> coefficient, rows numbered as ilp_arrays numbers them.
std::map<std::pair<int, int>, double> rows_by_definition(const Problem& p, const IlpModel& m) {
  std::map<std::pair<int, int>, double> want;
  const int n_bin = static_cast<int>(m.columns.size());
  const int n_choice = static_cast<int>(m.one_choice.size());
  for (int k = 0; k < n_choice; ++k) {
    want[{k, m.one_choice[k].first}] = 1.0;
    want[{k, m.one_choice[k].second}] = 1.0;
  }
  for (int j = 0; j < n_bin; ++j) {
    const IlpColumn& c = m.columns[j];
    const Candidate& cand = p.candidates[c.candidate];
    if (c.choice == Decision::kSwap) {
      want[{n_choice, j}] = -cand.swap_out_seconds * m.seconds_scale;
      want[{n_choice + 1, j}] = -cand.swap_in_seconds * m.seconds_scale;
    }
    const Interval& gap = c.choice == Decision::kSwap ? cand.swap_gap : cand.recompute_gap;
    for (std::size_t r = 0; r < m.memory_step.size(); ++r)
      if (gap.contains(m.memory_step[r]))
        want[{n_choice + 2 + static_cast<int>(r), j}] =
            static_cast<double>(cand.bytes) * m.bytes_scale;
  }
  want[{n_choice, n_bin}] = 1.0;
  want[{n_choice + 1, n_bin + 1}] = 1.0;
  // Chain holds: x_reader + x_input - z <= 1, z_prev - z <= 0, and -MiB
  // over the span.
  const int first_hold = n_choice + 2 + static_cast<int>(m.memory_lower.size());
  for (std::size_t h = 0; h < m.holds.size(); ++h) {
    const IlpHold& x = m.holds[h];
    const int row = first_hold + 2 * static_cast<int>(h), col = n_bin + 2 + static_cast<int>(h);
    want[{row, x.reader_col}] += 1.0;
    want[{row, x.input_col}] += 1.0;
    want[{row, col}] = -1.0;
    if (x.prev >= 0) {
      want[{row + 1, col}] = -1.0;
      want[{row + 1, n_bin + 2 + x.prev}] = 1.0;
    }
    for (std::size_t r = 0; r < m.memory_step.size(); ++r)
      if (x.span.contains(m.memory_step[r]))
        want[{n_choice + 2 + static_cast<int>(r), col}] = -x.mib;
  }
  // Shared chain steps (after the holds; no link cuts here): w - x >= 0
  // per reader column.
  int row = first_hold + 2 * static_cast<int>(m.holds.size());
  const int first_shared_col = n_bin + 2 + static_cast<int>(m.holds.size());
  for (std::size_t k = 0; k < m.shared.size(); ++k) {
    for (int reader : m.shared[k].reader_cols) {
      want[{row, reader}] = -1.0;
      want[{row++, first_shared_col + static_cast<int>(k)}] = 1.0;
    }
  }
  return want;
}

TEST(IlpArrays, HoldExactlyTheRowsOfTheModel) {
  std::size_t holds = 0, shared = 0;
  for (unsigned seed = 1; seed <= 12; ++seed) {
    Problem p = test::random_problem(seed, 40, 160, 0.6);
    IlpModel m = build_ilp_model(p);
    if (m.infeasible) continue;
    IlpArrays a = ilp_arrays(m, p);
    ASSERT_EQ(a.cols, static_cast<int>(m.columns.size() + 2 + m.holds.size() + m.shared.size()));
    ASSERT_EQ(a.rows, static_cast<int>(m.one_choice.size() + 2 + m.memory_lower.size() +
                                       2 * m.holds.size() + shared_rows(m)));
    holds += m.holds.size();
    shared += m.shared.size();
    ASSERT_EQ(a.starts.size(), static_cast<std::size_t>(a.cols) + 1);
    ASSERT_EQ(a.index.size(), a.value.size());
    std::map<std::pair<int, int>, double> got;
    for (int j = 0; j < a.cols; ++j) {
      for (int k = a.starts[j]; k < a.starts[j + 1]; ++k) {
        if (k > a.starts[j]) {
          EXPECT_LT(a.index[k - 1], a.index[k]) << "column " << j;  // ascending
        }
        got[{a.index[k], j}] = a.value[k];
      }
    }
    EXPECT_EQ(got, rows_by_definition(p, m)) << "seed " << seed;
    EXPECT_EQ(static_cast<std::size_t>(a.starts.back()), a.index.size());

    // Bounds: x + y <= 1, e >= transfers - hiding time, memory >= excess.
    const double inf = std::numeric_limits<double>::max();
    const std::size_t n_choice = m.one_choice.size();
    for (std::size_t k = 0; k < n_choice; ++k) EXPECT_EQ(a.row_upper[k], 1.0);
    EXPECT_EQ(a.row_lower[n_choice], -p.forward_seconds * m.seconds_scale);
    EXPECT_EQ(a.row_lower[n_choice + 1], -p.backward_seconds * m.seconds_scale);
    for (std::size_t r = 0; r < m.memory_lower.size(); ++r) {
      EXPECT_EQ(a.row_lower[n_choice + 2 + r], m.memory_lower[r]);
      EXPECT_EQ(a.row_upper[n_choice + 2 + r], inf);
    }
    EXPECT_EQ(a.col_upper[m.columns.size() + 1], inf);  // e_in
    const int first_memory = static_cast<int>(n_choice) + 2;
    const int end_memory = first_memory + static_cast<int>(m.memory_lower.size());
    std::size_t memory_entries = 0;
    for (int row : a.index) memory_entries += row >= first_memory && row < end_memory ? 1 : 0;
    EXPECT_EQ(m.nonzeros(), memory_entries);
    for (std::size_t h = 0; h < m.holds.size(); ++h) {
      EXPECT_EQ(a.row_upper[static_cast<std::size_t>(end_memory) + 2 * h], 1.0);
      EXPECT_EQ(a.row_upper[static_cast<std::size_t>(end_memory) + 2 * h + 1], 0.0);
      EXPECT_EQ(a.col_upper[m.columns.size() + 2 + h], 1.0);
    }
    // A shared step's column costs its seconds once, its rows are >= 0, and
    // each reader's recompute column costs that much less per read.
    const std::size_t first_shared_col = m.columns.size() + 2 + m.holds.size();
    const std::size_t first_shared_row = static_cast<std::size_t>(end_memory) + 2 * m.holds.size();
    for (std::size_t k = 0; k < m.shared.size(); ++k) {
      EXPECT_DOUBLE_EQ(a.objective[first_shared_col + k], m.shared[k].seconds * m.seconds_scale);
      EXPECT_EQ(a.col_upper[first_shared_col + k], 1.0);
    }
    for (std::size_t r = 0; r < shared_rows(m); ++r) {
      EXPECT_EQ(a.row_lower[first_shared_row + r], 0.0);
      EXPECT_EQ(a.row_upper[first_shared_row + r], inf);
    }
    std::vector<double> unshared(p.candidates.size(), 0.0);
    for (std::size_t i = 0; i < p.candidates.size(); ++i)
      unshared[i] = p.candidates[i].recompute_seconds;
    for (const SharedChainStep& step : p.shared_steps)
      for (std::size_t r : step.readers) unshared[r] -= step.seconds;
    for (const IlpColumn& c : m.columns) {
      if (c.choice == Decision::kRecompute) {
        EXPECT_NEAR(c.cost, unshared[c.candidate], 1e-15);
      }
    }
  }
  EXPECT_GT(holds, 0u);   // the random problems do have chain holds
  EXPECT_GT(shared, 0u);  // and shared chain steps
}

// A mid-sized problem Cbc needs a good fraction of a second for (optimum
// above zero, so the answer is not trivially "keep everything").
Problem mid_problem() { return test::random_problem(5, 400, 1200, 0.4); }

void expect_valid(const Problem& p, const Solution& s) {
  ASSERT_EQ(s.choice.size(), p.candidates.size());
  for (std::size_t i = 0; i < p.candidates.size(); ++i)
    EXPECT_TRUE(allowed(p.candidates[i], s.choice[i]));
  ModelEval e = evaluate(p, s.choice);
  EXPECT_TRUE(e.fits) << s.note;
  EXPECT_NEAR(replayed_overhead_seconds(p, s.choice), s.objective_seconds, 1e-12);
}

TEST(IlpTimeLimit, TinyLimitStillReturnsAFeasiblePlan) {
  Problem p = mid_problem();
  SolverOptions o;
  o.time_limit_seconds = kTiny;
  volatile bool interrupted = false;
  o.interrupted = &interrupted;
  Solution s = IlpSolver().solve(p, o);
  EXPECT_EQ(s.status, SolveStatus::kTimeLimit) << s.note;
  expect_valid(p, s);
  // Stopping on our own clock is not a SIGINT.
  EXPECT_FALSE(interrupted);
}

TEST(IlpTimeLimit, TinyLimitKeepsTheWarmStart) {
  Problem p = mid_problem();
  Solution greedy = GreedySolver().solve(p, {});
  ASSERT_EQ(greedy.status, SolveStatus::kHeuristic);
  SolverOptions o;
  o.time_limit_seconds = kTiny;
  o.warm_start = greedy.choice;
  Solution s = IlpSolver().solve(p, o);
  EXPECT_EQ(s.status, SolveStatus::kTimeLimit) << s.note;
  expect_valid(p, s);
  EXPECT_LE(s.objective_seconds, greedy.objective_seconds + 1e-12);
}

TEST(IlpTimeLimit, TinyLimitCountsTheCoarsening) {
  Problem p = test::random_problem(21, 300, 600, 0.7);
  SolverOptions o;
  o.time_limit_seconds = kTiny;
  Solution s = IlpSolver(100).solve(p, o);
  EXPECT_NE(s.note.find("coarsened"), std::string::npos) << s.note;
  EXPECT_EQ(s.status, SolveStatus::kTimeLimit) << s.note;
  expect_valid(p, s);
  EXPECT_FALSE(s.bound_seconds.has_value());
}

// The whole search's deadline (SolverOptions::deadline) already passed: no
// model is built, whatever the solve's own limit, and the warm start stands.
TEST(IlpTimeLimit, APassedSearchDeadlineKeepsTheWarmStart) {
  Problem p = mid_problem();
  Solution greedy = GreedySolver().solve(p, {});
  SolverOptions o;
  o.time_limit_seconds = 60;
  o.deadline = SolverOptions::Clock::now() - std::chrono::seconds(1);
  o.warm_start = greedy.choice;
  EXPECT_EQ(seconds_allowed(o), 0.0);
  Solution s = IlpSolver().solve(p, o);
  EXPECT_EQ(s.status, SolveStatus::kTimeLimit) << s.note;
  EXPECT_NE(s.note.find("search's time limit was spent"), std::string::npos) << s.note;
  EXPECT_EQ(s.choice, greedy.choice);
  expect_valid(p, s);
}

// What is left of the search's time caps a solve's own limit, and never
// raises it.
TEST(IlpTimeLimit, TheSearchDeadlineCapsEachSolvesLimit) {
  SolverOptions o;
  o.time_limit_seconds = 2;
  EXPECT_EQ(seconds_allowed(o), 2.0);
  o.deadline = SolverOptions::Clock::now() + std::chrono::hours(1);
  EXPECT_EQ(seconds_allowed(o), 2.0);
  o.deadline = SolverOptions::Clock::now() + std::chrono::milliseconds(500);
  EXPECT_LE(seconds_allowed(o), 0.5);
  EXPECT_GT(seconds_allowed(o), 0.0);
}

// Few enough binaries for the exact ILP, but too many nonzeros for Cbc to
// even load within a short limit: coarsened, and said so.
TEST(IlpTimeLimit, ModelsTooLargeForTheLimitAreCoarsened) {
  Problem p = test::random_problem(5, 1900, 8000, 0.6);
  IlpModel m = build_ilp_model(p);
  ASSERT_LE(m.columns.size(), 4000u);
  ASSERT_GT(m.nonzeros(), 1'000'000u);
  SolverOptions o;
  o.time_limit_seconds = kTiny;
  Solution s = IlpSolver().solve(p, o);
  EXPECT_NE(s.note.find("nonzeros >"), std::string::npos) << s.note;
  EXPECT_EQ(s.status, SolveStatus::kTimeLimit) << s.note;
  expect_valid(p, s);
}

// Within the limit, the solve is deterministic (one thread, fixed seed).
TEST(IlpTimeLimit, SameProblemSameAnswer) {
  Problem p = mid_problem();
  Solution a = IlpSolver().solve(p, {});
  Solution b = IlpSolver().solve(p, {});
  ASSERT_EQ(a.status, SolveStatus::kOptimal) << a.note;
  EXPECT_EQ(a.choice, b.choice);
  EXPECT_EQ(a.objective_seconds, b.objective_seconds);
  EXPECT_GT(a.objective_seconds, 0.0);
}

}  // namespace
}  // namespace memplan::solvers
