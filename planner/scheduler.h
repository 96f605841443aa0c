#pragma once
// Turns per-tensor decisions (keep / swap / recompute) into a schedule that
// is valid under PLAN_FORMAT.md and overlaps transfers with compute. The
// rules it follows: docs/scheduling.md.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/costs.h"
#include "ir/graph.h"
#include "planner/plan.h"

namespace memplan::planner {

struct ScheduleOptions {
  std::uint64_t budget_bytes = UINT64_MAX;
  // Look-ahead window for prefetching a swap_in: no earlier than this many
  // compute/recompute steps before its reader, widened back to where the
  // copy must start for it and the copies queued behind it to end in time
  // (estimated); SIZE_MAX: no limit but the budget. docs/scheduling.md, rule 8.
  std::size_t prefetch_window = 64;
  // Delay the free that ends a swapped tensor's forward residency until its
  // swap_out is estimated to have ended, as long as memory stays within the
  // budget, so the compute stream does not wait on the copy.
  bool defer_swap_frees = true;
  // Repair rounds over budget: a swapped or recomputed tensor held between
  // two reads across a peak over the budget is released after the first and
  // reloaded again for the second; each round reschedules and looks at the
  // peaks left. 0: hold every reloaded tensor until its last reader.
  std::size_t split_rounds = 4;
  // Where those rounds leave the schedule over the budget, schedule again
  // with runs of recomputed tensors remade by binomial checkpointing rather
  // than rerun in full for each reader (planner/nested_remake.h), and keep
  // that where its peak is lower.
  bool nest_remakes = true;
};

struct ScheduleResult {
  std::vector<Step> schedule;
  bool fits = true;  // peak <= budget
  std::uint64_t peak_bytes = 0;
  // When it does not fit: by how much, and where (step index, what is resident).
  std::uint64_t over_budget_bytes = 0;
  // The first step after which memory is at its peak (-1: the initial
  // state); set whether or not it fits.
  std::int64_t worst_step = -1;
  std::string diagnosis;  // one line; empty when it fits
  // Non-zero when the schedule nests remakes (ScheduleOptions::nest_remakes):
  // by how much the schedule without them missed the budget. The solvers'
  // model prices remakes as made once and held, so plan_search tightens its
  // model budget by this much as for a schedule that does not fit.
  std::uint64_t unnested_over_bytes = 0;
  // The compute stream's end as the scheduler estimates it (compute and
  // recompute times, waits for copies out before frees; not the copies in).
  double estimated_seconds = 0;
  // The decisions as applied: a decision that cannot apply (swap or
  // recompute of a graph input or output, recompute of a random node's
  // output, swap or recompute of a tensor that nothing reads after its last
  // forward reader: no backward node and no recompute chain) falls back to
  // keep. By TensorId; a missing entry of `decisions` counts as keep.
  std::vector<Decision> applied;
};

// decisions: by TensorId.
ScheduleResult make_schedule(const ir::Graph& graph, const ir::NodeCosts& costs,
                             const std::vector<Decision>& decisions,
                             const ScheduleOptions& options);

// make_schedule at `budget`, with a solver's prefetch hint
// (solvers::Solution::prefetch_window; unset: ScheduleOptions' default).
ScheduleResult schedule_for(const ir::Graph& graph, const ir::NodeCosts& costs,
                            const std::vector<Decision>& decisions, std::uint64_t budget,
                            std::optional<std::size_t> prefetch_window);

}  // namespace memplan::planner
