#pragma once
// The knapsack prices one reload per evicted tensor; the over-budget repair
// (docs/scheduling.md rule 7) reloads a tensor once per split, and a split
// recompute reruns its chain in full (gpt2_small a100-40gb 25 %: layer 5's
// attention chain run 46 times, 49 % in the model, 456 % simulated). These
// are the lazy rows from the replay (docs/model.md §Realised reloads): the
// counts a schedule realised, put back into the problem as that many
// reloads' time, so a plan's objective prices what its schedule does.
#include <cstdint>
#include <span>
#include <vector>

#include "ir/graph.h"
#include "planner/scheduler.h"
#include "solvers/problem.h"

namespace memplan::planner {

// Per candidate of `problem` (built from `graph`): how many times
// `schedule` runs its producer, where the schedule recomputes it (a node's
// runs count on the first of its outputs that is a candidate); 1 for the
// rest. Swaps count once: an extra copy in comes where the repair split
// the tensor, after the peak, where compute mostly hides it; priced as that
// many copies on the link it overshot (resnet50 v100-32gb 25 %: 35.29 %
// in the model against 22.38 % simulated; 25.51 % without).
std::vector<std::uint32_t> realised_reloads(const ir::Graph& graph, const solvers::Problem& problem,
                                            const ScheduleResult& schedule);

// `problem` with each candidate's producer run `reloads` times:
// recompute_seconds gains the runs past the first. The chain a rerun
// repeats counts on the chain's own candidates; chain intermediates that
// are no candidate are not counted.
solvers::Problem priced_with_reloads(const solvers::Problem& problem,
                                     std::span<const std::uint32_t> reloads);

}  // namespace memplan::planner
