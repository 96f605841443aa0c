#pragma once
// The over-budget repair: "a reloaded tensor is kept until its last reader
// while the budget allows; else it is reloaded again later". After a
// schedule is built, evicted tensors held between two reads of a reload
// segment across slots over the budget get an extra segment, so they are
// freed after the read before and reloaded (swap_in again or recomputed
// again) for the read after.
#include <cstdint>
#include <span>
#include <vector>

#include "ir/costs.h"
#include "ir/graph.h"
#include "planner/prefetch.h"
#include "planner/reload_plan.h"
#include "planner/schedule_emit.h"

namespace memplan::planner::detail {

// Which gaps go first. kLargest needs the fewest splits; kCheapest (the
// most bytes freed per second of reload) costs the least time where many
// gaps would do (resnet50 a100-40gb 25 %: 50.41 -> 41.30 %), but splits
// more where they rerun long chains (gpt2_small a100-40gb 25 %: 456 ->
// 606 %): make_schedule runs largest-first, and cheapest-first from the
// first round where the two would choose other splits.
enum class SplitOrder { kLargest, kCheapest };

// One split: `tensor` gets a reload segment starting at turn `at`.
struct Split {
  ir::TensorId tensor;
  ir::NodeId at;
  friend auto operator<=>(const Split&, const Split&) = default;
};

// The splits to make, taken in `order` while a slot the split would relieve
// is still over the budget (by the estimate that the split frees exactly
// its bytes over the turns between the two reads); empty where nothing is
// over or nothing would relieve it. O(gaps log slots), where gaps are pairs
// of consecutive reads in reload segments. Tensors marked in `owned` (by
// TensorId; may be shorter) are left alone: their splits are the nested
// remakes' (nested_remake.h).
std::vector<Split> choose_splits(const ir::Graph& graph, const ir::NodeCosts& costs,
                                 const ReloadPlan& plan, const Skeleton& skeleton,
                                 const Placed& placed, std::uint64_t budget_bytes,
                                 std::span<const char> owned, SplitOrder order);

// Adds `chosen` to `splits` (see plan_reloads). A recomputed tensor's
// evicted inputs are split at the same turn, so its chain reruns in full
// there rather than its inputs being held from their previous read.
void apply_splits(const ir::Graph& graph, const ReloadPlan& plan, std::span<const Split> chosen,
                  std::vector<std::vector<ir::NodeId>>& splits);

}  // namespace memplan::planner::detail
