#pragma once
// Places each swap_in of a Skeleton: as early as the budget allows, within a
// look-ahead window before its reader, never before the free that precedes
// it and never ahead of an earlier reader's swap_in (the h2d stream is in
// order, so an early copy for a late reader would delay an urgent one).
#include <cstdint>
#include <vector>

#include "ir/graph.h"
#include "planner/plan.h"
#include "planner/schedule_emit.h"

namespace memplan::planner::detail {

struct PrefetchOptions {
  std::uint64_t budget_bytes = UINT64_MAX;
  // A swap_in goes no earlier than this many compute/recompute steps before
  // its reader, unless the copy is estimated to take longer than those
  // steps: then the window reaches back until the compute before the reader
  // covers the copy.
  std::size_t window_steps = 64;
  double h2d_bytes_per_s = 0;
};

struct Placed {
  std::vector<Step> schedule;
  std::uint64_t peak_bytes = 0;
  // The step after which memory peaks (the first such); -1: the initial state.
  std::int64_t peak_step = -1;
  std::size_t peak_slot = 0;  // the skeleton slot of that state
  // By skeleton slot: memory after the swap_ins placed there (see Skeleton).
  std::vector<std::int64_t> level;
};

Placed place_swap_ins(const ir::Graph& graph, const Skeleton& skeleton,
                      const PrefetchOptions& options);

}  // namespace memplan::planner::detail
