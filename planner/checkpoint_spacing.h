#pragma once
// Chen et al.'s checkpointing with its spacing searched: every k-th
// candidate, in the order the forward makes them, kept and the rest evicted
// (recomputed, swapped where they cannot be), for a few k around √C. Under
// tight budgets the scheduler nests remakes (docs/scheduling.md, rule 7),
// and then which tensors stay as the forward's checkpoints decides the
// remakes more than the solvers' once-remade model can see: on a uniform
// 32-step chain at 10 states, spacing 5 takes 29 remakes where the solvers'
// choice takes 33.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>

#include "ir/costs.h"
#include "ir/graph.h"
#include "planner/feasibility_fallback.h"
#include "planner/scheduler.h"
#include "solvers/problem.h"

namespace memplan::planner {

struct SpacingOptions {
  // Past this many candidates each schedule costs more than a variant is
  // likely to buy; the search is skipped.
  std::size_t max_candidates = 4096;
  std::size_t max_spacings = 12;
  volatile bool* interrupted = nullptr;
};

struct SpacedPlan {
  FallbackPlan plan;
  std::size_t spacing = 0;
  double seconds = 0;  // as `seconds_of` priced it
};

// The fastest fitting schedule among the spacings, by `seconds_of`; nullopt
// when none fits or the search was skipped.
std::optional<SpacedPlan> fit_by_checkpoint_spacing(
    const ir::Graph& graph, const ir::NodeCosts& costs, const solvers::Problem& problem,
    std::uint64_t budget, const std::function<double(const ScheduleResult&)>& seconds_of,
    const SpacingOptions& options);

}  // namespace memplan::planner
