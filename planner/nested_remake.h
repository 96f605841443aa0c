#pragma once
// Nested remakes (docs/scheduling.md, rule 7): a run of recomputed tensors
// y_1..y_n, each made from the one before and read by the backward in the
// opposite order, is first remade in one turn and held. When that holds too
// much, the repair does not rerun the run from its base for every reader
// (quadratic) but remakes it by binomial checkpointing with the slots the
// budget leaves (chain_reversal.h): some remade tensors are held as
// temporary checkpoints, freed, and remade again later, so one tensor may be
// recomputed several times.
#include <cstdint>
#include <span>
#include <vector>

#include "ir/graph.h"
#include "planner/prefetch.h"
#include "planner/reload_plan.h"
#include "planner/schedule_emit.h"

namespace memplan::planner::detail {

struct RemakeRun {
  // y_1..y_n in chain order; their base y_0 (an input of y_1's producer) is
  // resident whenever they are remade.
  std::vector<ir::TensorId> tensors;
  // By position: the turn of y_k's first backward read (need[n-1] is the
  // turn that first remakes the run).
  std::vector<ir::NodeId> need;
  ir::NodeId last_turn = 0;  // the turn of the run's last read
  std::uint64_t bytes = 0;   // its largest tensor
  std::size_t slots = 0;     // 0: not nested (remade once, held)
};

// Runs longer than this are left to the plain repair.
inline constexpr std::size_t kMaxRemakeRun = 256;

// The runs of a plan cut without splits: tensors recomputed for one turn,
// each read after its eviction only by the next one's recompute in that
// turn and by backward nodes, the first backward reads in reverse chain
// order, producers with no other recomputed input and no other output of
// more than 1/kSiblingHoldRatio of its bytes. At least two tensors each.
std::vector<RemakeRun> find_remake_runs(const ir::Graph& graph, const ReloadPlan& plan);

// For each run whose turns are over the budget in `placed`: fewer slots
// (by its bytes against the excess, at least one fewer than before, never
// below two) and, in `splits`, the turns that remake each of its tensors
// under the binomial schedule for them. Returns whether any run changed.
bool nest_over_budget(const Skeleton& skeleton, const Placed& placed, std::uint64_t budget_bytes,
                      const ir::Graph& graph, std::vector<RemakeRun>& runs,
                      std::vector<std::vector<ir::NodeId>>& splits);

// By TensorId: 1 for the tensors of `runs` (their splits are theirs).
std::vector<char> remake_run_tensors(std::size_t tensor_count, std::span<const RemakeRun> runs);

}  // namespace memplan::planner::detail
