#pragma once
// `--solver checkmate`: Checkmate's MILP (solvers/remat_milp) as a solver
// that writes plans, for small graphs. Recompute only: it chooses every run
// of every node and so every free, so a value may be remade several times
// and kept as a temporary checkpoint in between (issue 15), which the
// knapsack's solvers do not price. Exact for its model (a node's outputs
// as one value, first runs in the graph's order); the plan's simulated
// overhead is its recompute time, which is the MILP's objective. Graph
// inputs and initializers stay on the device: a graph with tensors that
// start on the host (PlanRequest::state_on_host) gets no schedule.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ir/costs.h"
#include "ir/graph.h"
#include "planner/plan.h"
#include "solvers/solve_status.h"

namespace memplan::planner {

// Past this many nodes the MILP (nodes² stages × nodes) is not built: the
// solver says so and hands out no plan. Past it the root LP alone outruns
// the time limit (a 130-node chain: 20 s for a 5 s limit; the 97-node
// gru_lm of the zoo: 31 s for 10 s).
inline constexpr std::size_t kCheckmateMaxNodes = 64;

struct CheckmateOptions {
  double time_limit_seconds = 60;
  int threads = 1;
  int max_branch_nodes = 0;  // Cbc's, 0 for no limit (RematMilpOptions)
  // A schedule of the same graph to start from (a recompute-only plan's);
  // only its compute and recompute steps are read, and only where they fit
  // the MILP's stages (solvers::RematMilpOptions::warm_start).
  std::vector<Step> warm_start;
  volatile bool* interrupted = nullptr;
};

struct CheckmateSchedule {
  solvers::SolveStatus status = solvers::SolveStatus::kInfeasible;
  std::vector<Step> schedule;           // empty when no schedule was found
  std::vector<Decision> decisions;      // by TensorId: recompute where a recompute remade it
  double recompute_seconds = 0;         // the runs past each node's first
  std::optional<double> bound_seconds;  // on recompute_seconds, Cbc's
  double solve_seconds = 0;
  std::string note;  // why there is no schedule, the warm start, rounding
};

CheckmateSchedule checkmate_schedule(const ir::Graph& graph, const ir::NodeCosts& costs,
                                     std::uint64_t budget_bytes, const CheckmateOptions& options);

// The steps of `runs` (node ids, in order; a node's later runs are
// recomputes), each tensor freed right after its last read before its
// producer runs again, or after it is made where nothing reads it first;
// graph inputs, initializers and graph outputs never.
std::vector<Step> schedule_of_runs(const ir::Graph& graph, std::span<const std::size_t> runs);

}  // namespace memplan::planner
