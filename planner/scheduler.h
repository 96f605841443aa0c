#pragma once
// Turns per-tensor decisions (keep / swap / recompute) into a schedule that
// is valid under PLAN_FORMAT.md and overlaps transfers with compute.
#include <cstdint>
#include <string>
#include <vector>

#include "ir/costs.h"
#include "ir/graph.h"
#include "planner/plan.h"

namespace memplan::planner {

struct ScheduleOptions {
  std::uint64_t budget_bytes = UINT64_MAX;
  // Look-ahead window (steps) for prefetching swap_ins before their reader.
  std::size_t prefetch_window = 64;
};

struct ScheduleResult {
  std::vector<Step> schedule;
  bool fits = true;                 // peak <= budget
  std::uint64_t peak_bytes = 0;
  // When it does not fit: by how much, and where (step index, what is resident).
  std::uint64_t over_budget_bytes = 0;
  std::int64_t worst_step = -1;
  std::string diagnosis;
  // The decisions as applied: a decision that cannot apply (swap or
  // recompute of a graph input or output, recompute of a random node's
  // output or of a tensor no backward node reads) falls back to keep.
  std::vector<Decision> applied;
};

// decisions: by TensorId.
ScheduleResult make_schedule(const ir::Graph& graph, const ir::NodeCosts& costs,
                             const std::vector<Decision>& decisions, const ScheduleOptions& options);

}  // namespace memplan::planner
