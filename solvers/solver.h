#pragma once
// One interface for the heuristic, the ILP and the baselines.
#include <algorithm>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "solvers/decision.h"
#include "solvers/problem.h"
#include "solvers/solve_status.h"

namespace memplan::solvers {

struct SolverOptions {
  using Clock = std::chrono::steady_clock;
  double time_limit_seconds = 60;  // per solve
  // The end of the whole plan search, when it has one: a time-limited
  // solver (Solver::time_limited) then gets the smaller of
  // time_limit_seconds and what is left (seconds_allowed).
  std::optional<Clock::time_point> deadline;
  int threads = 1;        // Cbc threads; 1 keeps results reproducible
  bool progress = false;  // incumbent / bound / elapsed on stderr
  // Optional: the true overhead (seconds) of an assignment, from the
  // scheduler and simulator. Local search uses it when given; the
  // solvers never depend on the planner themselves. The greedy solver
  // calls it from several threads at once: it must be safe to.
  std::function<std::optional<double>(const std::vector<Decision>&)> simulate;
  // A starting assignment (the ILP's warm start).
  std::vector<Decision> warm_start;
  // Set from a signal handler: stop and return the best found so far. The
  // ILP also sets it when Cbc's own SIGINT handler stopped the search.
  volatile bool* interrupted = nullptr;
};

struct Solution {
  std::vector<Decision> choice;                   // one per candidate
  SolveStatus status = SolveStatus::kInfeasible;  // nothing found until a solver says
  double objective_seconds = 0;                   // under the model
  std::optional<double> bound_seconds;
  double solve_seconds = 0;
  std::string note;  // e.g. "coarsened: 412 groups for 1536 candidates"
  // A schedule hint: how many steps ahead swap_ins may be prefetched (vDNN
  // takes 1: one node ahead, not one layer); unset: the scheduler's default.
  std::optional<std::size_t> prefetch_window;
  // Where a second opinion (a simulator-judged alternative) replaced the
  // solver's own answer: that answer, which budget tightening follows.
  std::vector<Decision> own_choice;
  // What options.simulate said of `choice` itself, where the solver asked
  // and it fitted: the caller need not schedule and simulate it again.
  std::optional<double> simulated_seconds;
};

// What a time-limited solve may take: its own limit, or what is left of
// the search's, whichever is less; 0 once the deadline has passed.
inline double seconds_allowed(const SolverOptions& o) {
  if (!o.deadline) return o.time_limit_seconds;
  const double left =
      std::chrono::duration<double>(*o.deadline - SolverOptions::Clock::now()).count();
  return std::clamp(left, 0.0, o.time_limit_seconds);
}

class Solver {
 public:
  virtual ~Solver() = default;
  virtual std::string_view name() const = 0;
  // Whether it runs until a time limit (the ILP) rather than to the end of
  // its own work (the heuristic, the baselines).
  virtual bool time_limited() const { return false; }
  virtual Solution solve(const Problem& problem, const SolverOptions& options) const = 0;
};

}  // namespace memplan::solvers
