#pragma once
// The static memory layout of a plan: an offset in one device arena for
// every allocation the schedule makes, computed ahead of time so a runtime
// needs no allocator (ATP's memory pool, done offline). Written to plan.json
// under `memory_layout` (runtime-stub/README.md describes the key).
//
// An allocation is a tensor becoming resident (PLAN_FORMAT.md): a graph input
// or initializer at the start (step -1) unless the plan lists it in
// `initial_host` (then its first swap_in allocates it), an output of a
// compute or recompute step, or the target of a swap_in. It lives from that
// step until the free that releases it (or the end). Aliases own no storage
// and get none.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace memplan::planner {

struct Plan;

struct Allocation {
  std::int64_t step = -1;  // schedule index; -1: resident from the start
  ir::TensorId tensor = ir::kNoTensor;
  std::uint64_t offset = 0;  // bytes from the arena's start, a multiple of the alignment
  std::uint64_t bytes = 0;   // the tensor's bytes as the plan states them
  friend bool operator==(const Allocation&, const Allocation&) = default;
};

struct MemoryLayout {
  // cudaMalloc returns 256-byte aligned memory; keeping every offset on that
  // boundary lets kernels use wide accesses anywhere in the arena.
  static constexpr std::uint64_t kDefaultAlignment = 256;

  std::uint64_t alignment = kDefaultAlignment;
  std::uint64_t arena_bytes = 0;        // end of the highest allocation
  std::uint64_t peak_bytes = 0;         // the plan's peak (PLAN_FORMAT), for the ratio
  std::vector<Allocation> allocations;  // in schedule order (step -1 first)

  // arena / peak: 1.0 means the arena is exactly as big as the plan's peak.
  double fragmentation() const;
  friend bool operator==(const MemoryLayout&, const MemoryLayout&) = default;
};

// The allocations `plan.schedule` makes, in order, with offset 0: what any
// layout of this plan must place. Replays the schedule with the planner's
// Residency, so it agrees with the validator and the simulator; it tolerates
// schedules that break a rule (the runtime's corruption tests run those).
std::vector<Allocation> allocations_of(const ir::Graph& graph, const Plan& plan);

enum class LayoutMethod {
  // Offline placement over lifetimes: allocations are placed in some order,
  // each into a gap left by the allocations already placed whose lifetimes
  // overlap its own (or on top of them). Four strategies (largest first into
  // the smallest gap and into the lowest, largest size x lifetime and
  // longest-lived first into the smallest; the first alone past
  // kLargestToTryEveryOrder allocations) and kInScheduleOrder are tried and
  // the smallest arena kept. The tightest arenas, but O(n^2) per strategy:
  // most of a 100k-node plan's time went here.
  kBySize,
  // Best-fit from a free list in schedule order, as an allocator would do
  // online: O(n log n), arenas somewhat above the peak.
  kInScheduleOrder,
  // kBySize up to kLargestToPlaceBySize allocations, then kInScheduleOrder.
  kAuto,
};
// gpt2_xl makes about 14k allocations; the synthetic 100k-node graph 200k.
inline constexpr std::size_t kLargestToPlaceBySize = 50000;
inline constexpr std::size_t kLargestToTryEveryOrder = 20000;

// Deterministic for either method.
MemoryLayout compute_memory_layout(const ir::Graph& graph, const Plan& plan,
                                   std::uint64_t alignment = MemoryLayout::kDefaultAlignment,
                                   LayoutMethod method = LayoutMethod::kAuto);

// The first thing wrong with `layout` for `plan`, as one line; empty when it
// is usable: the alignment is a power of two of at least kDefaultAlignment
// (PLAN_FORMAT; the CUDA kernels' 8-byte accesses fault on less), the
// allocations are those of allocations_of() in order, offsets are aligned
// and inside the arena, and no two live allocations overlap. The budget is
// not checked here: a runtime may run an over-budget layout to measure it.
std::string memory_layout_problem(const ir::Graph& graph, const Plan& plan,
                                  const MemoryLayout& layout);

// Empty when `layout.arena_bytes` fits `plan.budget_bytes`; else one line
// saying by how much it does not (PLAN_FORMAT: such a layout is not a plan
// for that budget).
std::string arena_budget_problem(const Plan& plan, const MemoryLayout& layout);

}  // namespace memplan::planner
