#pragma once
// The dynamic half of the scheduler: walks the graph's node order and issues
// compute, recompute, swap_out and free steps as a ReloadPlan says, leaving
// each swap_in as a request at its latest legal place (its deadline) for
// prefetch.h to move earlier.
#include <cstdint>
#include <vector>

#include "ir/costs.h"
#include "ir/graph.h"
#include "planner/plan.h"
#include "planner/reload_plan.h"

namespace memplan::planner::detail {

// A swap_in to insert in slot `deadline` or earlier, but not before slot
// `earliest`. Slot k is the place right before skeleton step k (slot
// steps.size() is the end).
struct SwapInRequest {
  ir::TensorId tensor = 0;
  std::uint32_t deadline = 0;
  std::uint32_t earliest = 0;
};

// The schedule without swap_ins. level, clock and computes have one entry
// per slot: level[k] is the device memory right after the swap_ins of slot k
// (counting every request as if issued at its deadline), clock[k] the
// estimated compute-stream time there, computes[k] the number of compute
// and recompute steps before it.
struct Skeleton {
  std::vector<Step> steps;
  std::vector<ir::NodeId> turn;  // by step: the node whose turn issued it
  std::vector<std::uint64_t> level;
  std::vector<double> clock;
  std::vector<std::uint32_t> computes;
  std::vector<SwapInRequest> swap_ins;  // deadlines ascending
};

struct EmitOptions {
  std::uint64_t budget_bytes = UINT64_MAX;
  // Delay the free that ends a swapped tensor's first segment until its
  // swap_out is estimated to have ended, while memory stays within budget,
  // so the compute stream does not wait for the copy.
  bool defer_swap_frees = true;
};

// Throws std::logic_error if the plan and the graph disagree (a bug).
Skeleton emit_skeleton(const ir::Graph& graph, const ir::NodeCosts& costs, const ReloadPlan& plan,
                       const EmitOptions& options);

}  // namespace memplan::planner::detail
