#pragma once
// Checkmate's MILP (Jain et al., MLSys 2020) over a RematProblem, solved by
// Cbc: the exact optimum of rematerialization for small graphs, with values
// recomputed as often as pays and kept as temporary checkpoints. Stage t
// runs node t for the first time, after any recomputations of earlier
// nodes, in node order: R[t][i] (node i runs in stage t), S[t][i] (value i
// resident when stage t starts), FREE[t][i][k] (value i freed after node k
// runs in stage t), U[t][k] (memory while node k runs). The first runs are
// in the problem's node order, which is where it may miss a schedule that
// orders branches differently (docs/model.md).
#include <cstddef>
#include <optional>
#include <vector>

#include "solvers/remat_problem.h"
#include "solvers/solve_status.h"

namespace memplan::solvers {

struct RematMilpOptions {
  double time_limit_seconds = 60;
  int threads = 1;
  // Cbc's preprocessing: faster to a proof, but it can crash when the clock
  // stops it (CglPreProcess::postProcess); the caller retries without.
  bool preprocess = true;
  // Cbc's branch-and-bound nodes at most (0: no limit), a bound on work
  // that gives the same answer on a slow machine as on a fast one.
  int max_branch_nodes = 0;
  // Runs to start from (Cbc's first incumbent), e.g. a heuristic's plan.
  // Used only where they fit the formulation: the first runs in node order,
  // each stage's runs in node order and each node at most once in it, no
  // second run of an output or of a node that is not recomputable, and
  // the eager replay within the budget (in the MILP's units).
  std::vector<std::size_t> warm_start;
};

struct RematSchedule {
  SolveStatus status = SolveStatus::kInfeasible;  // optimal, time_limit or infeasible
  // The runs in order, stage after stage; empty when no schedule was found.
  std::vector<std::size_t> runs;
  double seconds = 0;  // the runs' total compute
  std::optional<double> bound_seconds;
  // Set when bytes did not fit Cbc's precision and were rounded up (the
  // budget down): the schedule is valid but the optimum may be missed.
  bool rounded = false;
  bool warm_started = false;  // options.warm_start was Cbc's first incumbent
};

RematSchedule solve_remat_milp(const RematProblem& problem, const RematMilpOptions& options);

}  // namespace memplan::solvers
