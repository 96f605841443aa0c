#pragma once
// One interface for the heuristic, the ILP and the baselines.
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
  double time_limit_seconds = 60;
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
};

class Solver {
 public:
  virtual ~Solver() = default;
  virtual std::string_view name() const = 0;
  virtual Solution solve(const Problem& problem, const SolverOptions& options) const = 0;
};

}  // namespace memplan::solvers
