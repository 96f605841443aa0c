#pragma once
// The static half of the scheduler: which decisions apply, and for every
// tensor the reads the schedule will make of it, cut into residency
// segments. A segment is an interval during which the tensor stays
// resident: the first starts when its producer runs, each later one with a
// reload (a swap_in or a recompute of its producer) and every segment ends
// with a free right after its last read. Recompute chains are resolved here:
// a recompute reads its node's inputs, so those reads are added to the
// inputs' own plans before their segments are cut.
#include <compare>
#include <cstdint>
#include <vector>

#include "ir/graph.h"
#include "planner/plan.h"

namespace memplan::planner::detail {

// Where a read happens. Before node `node` runs, the scheduler first reloads
// what that turn needs (recomputes ordered by the recomputed node's index),
// then computes `node`; `by` is the recomputed node for a recompute's read,
// ir::kNoNode for the compute of `node` itself, so the order of UsePos is the
// order of the steps.
struct UsePos {
  ir::NodeId node = 0;
  ir::NodeId by = ir::kNoNode;
  auto operator<=>(const UsePos&) const = default;
};

struct TensorPlan {
  // The decision as applied (what ScheduleResult::applied reports).
  Decision applied = Decision::kKeep;
  // How its later segments are reloaded: kKeep when it has none. A tensor
  // kept by decision is still freed after its last reader as in the
  // baseline; when a recompute chain needs it again after that, it is
  // recomputed (reload kRecompute, applied kKeep), unless its producer is
  // random: then it stays resident until the chain's read instead.
  Decision reload = Decision::kKeep;
  // Never freed: graph inputs, initializers, graph outputs (and a tensor with
  // no producer, which a loaded graph does not have), unless swapped.
  bool pinned = false;
  // Swapped training state (a graph input or initializer, not an output):
  // segment 0 holds its forward reads (none: it leaves at the start), and
  // its last segment is never closed, so it ends the iteration resident, as
  // it began it (the next iteration's start).
  bool state = false;
  // Training state kept on the host between iterations (the graph marks it
  // `starts_on_host`): not resident at the start, segment 0 is empty, every
  // later segment is reloaded by a swap_in, and its last segment closes like
  // any other, with a copy out first where a node wrote it in place.
  // Keep splits its reads nowhere; swap splits them after its last forward
  // reader.
  bool on_host = false;
  // The last node of the first segment: for swap and recompute decisions
  // its producer or its last forward reader, whichever is later; for keep
  // its last reader (or its producer), where the baseline frees it.
  ir::NodeId evict_after = ir::kNoNode;
  std::vector<UsePos> uses;  // every read, ascending, distinct
  // Segment k covers uses[begin[k]] .. uses[begin[k+1] - 1] (the last one up
  // to uses.size()). Segment 0 starts when the producer runs and may hold no
  // use; every later segment starts with a reload before its first use.
  std::vector<std::uint32_t> segment_begin;
  // The turn whose reloads open segment k (k >= 1): that of its first use,
  // or, for an output recomputed anyway in an earlier turn for a sibling, that
  // turn (see kSiblingHoldRatio). Entry 0 is unused.
  std::vector<ir::NodeId> reload_turn;
};

// A recompute makes all its node's outputs. An output due in a later turn
// than a sibling is held from the sibling's recompute instead of its node
// running again, when it is at most 1/kSiblingHoldRatio of the bytes due in
// that earlier turn (LayerNormalization's mean and inverse deviation beside
// its output: 16 KiB held against 20 MiB remade).
inline constexpr std::uint64_t kSiblingHoldRatio = 16;

struct ReloadPlan {
  std::vector<TensorPlan> tensors;  // by TensorId
  // Tensors reloaded in the turn of each node (before it runs), in the order
  // the reloads are issued: by producer index, recomputes before swap_ins of
  // the same producer (a recompute may make the sibling resident for free).
  std::vector<std::vector<ir::TensorId>> reloads_before;  // by NodeId
};

// Number of uses in segment k.
std::uint32_t segment_size(const TensorPlan& p, std::size_t k);

// The requested decisions less those that can never apply: any eviction of
// a graph output, a recompute of a graph input, initializer or random
// node's output. plan_reloads drops the rest that cannot apply.
std::vector<Decision> applicable_decisions(const ir::Graph& graph,
                                           const std::vector<Decision>& requested);

// Uses and segments for `applied`; TensorPlan::applied is the decision that
// finally applies: keep also for a tensor that nothing reads after its
// eviction (no backward reader and no recompute chain through it).
// `splits[t]` (may be shorter than the tensor count) lists nodes: an extra
// segment of an evicted tensor t starts with its first read in or after the
// turn of each; one that falls in segment 0 or at a segment start is ignored.
// Splits name nodes, not use indices, because a split of one tensor adds
// recompute reads to others.
ReloadPlan plan_reloads(const ir::Graph& graph, const std::vector<Decision>& applied,
                        const std::vector<std::vector<ir::NodeId>>& splits);

}  // namespace memplan::planner::detail
