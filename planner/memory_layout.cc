#include "planner/memory_layout.h"

#include <algorithm>
#include <array>
#include <limits>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <thread>

#include "planner/plan.h"
#include "planner/residency.h"

namespace memplan::planner {
namespace {

// An allocation with the step that releases it: it occupies memory after
// steps [start, end) (PLAN_FORMAT counts memory after each step), so two
// allocations may share bytes exactly when these ranges do not meet.
struct Lifetime {
  std::int64_t start = -1;
  std::int64_t end = 0;
};

struct Replay {
  std::vector<Allocation> allocations;
  std::vector<Lifetime> lifetimes;  // parallel to allocations
  std::uint64_t peak_bytes = 0;
};

Replay replay(const ir::Graph& graph, const Plan& plan) {
  const std::size_t tensors = graph.tensors().size();
  Residency residency(graph, plan);
  Replay r;
  constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();
  std::vector<std::size_t> open(tensors, kNone);  // live allocation of each base tensor
  auto bytes_of = [&](ir::TensorId t) -> std::uint64_t {
    return t < plan.tensor_bytes.size() ? plan.tensor_bytes[t] : 0;
  };
  auto add = [&](std::int64_t step, ir::TensorId t) {
    open[t] = r.allocations.size();
    r.allocations.push_back({step, t, 0, bytes_of(t)});
    r.lifetimes.push_back({step, 0});
  };
  // What Residency holds before the first step: an initial_host tensor is
  // allocated by its swap_in, not here.
  for (ir::TensorId t = 0; t < tensors; ++t)
    if (residency.storage_resident(t) && !residency.is_alias(t)) add(-1, t);

  const auto steps = static_cast<std::int64_t>(plan.schedule.size());
  for (std::int64_t i = 0; i < steps; ++i) {
    const Step& step = plan.schedule[static_cast<std::size_t>(i)];
    if (step.op == StepOp::kFree && step.id < tensors) {
      const ir::TensorId t = residency.base(step.id);
      if (open[t] != kNone) {
        r.lifetimes[open[t]].end = i;
        open[t] = kNone;
      }
    }
    // What the step makes resident is what Residency allocates for it.
    for (ir::TensorId t : residency.apply(step)) add(i, t);
  }
  for (std::size_t a = 0; a < r.allocations.size(); ++a)
    if (open[r.allocations[a].tensor] == a) r.lifetimes[a].end = steps;
  r.peak_bytes = residency.peak_bytes();
  return r;
}

std::uint64_t round_up(std::uint64_t v, std::uint64_t alignment) {
  return (v + alignment - 1) / alignment * alignment;
}

bool overlap_in_time(const Lifetime& a, const Lifetime& b) {
  return a.start < b.end && b.start < a.end;
}

std::string describe(const ir::Graph& graph, const Allocation& a) {
  std::string name = a.tensor < graph.tensors().size() ? graph.tensor(a.tensor).name
                                                       : "#" + std::to_string(a.tensor);
  return "'" + name + "' (step " + std::to_string(a.step) + ")";
}

}  // namespace

double MemoryLayout::fragmentation() const {
  return peak_bytes == 0 ? 1.0 : static_cast<double>(arena_bytes) / static_cast<double>(peak_bytes);
}

std::vector<Allocation> allocations_of(const ir::Graph& graph, const Plan& plan) {
  return replay(graph, plan).allocations;
}

namespace {

// Where each allocation goes (parallel to Replay::allocations) and the arena
// that makes.
struct Placement {
  std::vector<std::uint64_t> offsets;
  std::uint64_t arena_bytes = 0;
};

// The orders in which best fit places allocations. Largest first lets big
// tensors fix the arena's shape and small ones fill the gaps; longest-lived
// or largest size x lifetime first keep a long allocation from landing on
// top of many short ones. No one order wins on every plan (issue 19: bert
// vdnn, gpt2 greedy), so the layout tries each and keeps the smallest arena.
// kSmallest: the smallest gap that fits; kLowest: the lowest. Neither wins
// everywhere: on resnet50 vDNN at 50 % the lowest gap packs 11.4 % over the
// peak, the smallest 28 %.
enum class Gap { kSmallest, kLowest };

enum class Order { kSize, kArea, kLifetime };
struct Strategy {
  Order order;
  Gap gap;
};
// The first is the one used alone past kLargestToTryEveryOrder allocations.
constexpr std::array<Strategy, 4> kStrategies = {{{Order::kSize, Gap::kSmallest},
                                                  {Order::kSize, Gap::kLowest},
                                                  {Order::kArea, Gap::kSmallest},
                                                  {Order::kLifetime, Gap::kSmallest}}};

std::vector<std::size_t> placement_order(const Replay& r, const std::vector<std::uint64_t>& size,
                                         Order key) {
  auto length = [&](std::size_t a) {
    return static_cast<std::uint64_t>(r.lifetimes[a].end - r.lifetimes[a].start);
  };
  auto primary = [&](std::size_t a) -> std::pair<long double, std::uint64_t> {
    switch (key) {
      case Order::kArea:
        return {static_cast<long double>(size[a]) * static_cast<long double>(length(a)), size[a]};
      case Order::kLifetime:
        return {static_cast<long double>(length(a)), size[a]};
      case Order::kSize:
        break;
    }
    return {static_cast<long double>(size[a]), 0};
  };
  std::vector<std::size_t> order(size.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  // Ties by start, then by index, so the result does not depend on the
  // sort's stability.
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const auto pa = primary(a), pb = primary(b);
    if (pa != pb) return pa > pb;
    if (r.lifetimes[a].start != r.lifetimes[b].start)
      return r.lifetimes[a].start < r.lifetimes[b].start;
    return a < b;
  });
  return order;
}

// Over lifetimes in `order`: each allocation goes into a gap that the placed
// allocations live at the same time leave, or on top of them.
Placement place_by_size(const Replay& r, const std::vector<std::uint64_t>& size,
                        const std::vector<std::size_t>& order, Gap gap) {
  Placement out;
  out.offsets.assign(size.size(), 0);
  // Placed allocations by ascending offset. Each placement scans them once,
  // so the whole layout is O(n^2) in the worst case; n is the number of
  // allocations (about 2x the tensors), a few tens of thousands at most.
  std::vector<std::size_t> placed;
  placed.reserve(size.size());
  for (std::size_t a : order) {
    if (size[a] == 0) continue;  // offset 0, occupies nothing
    std::uint64_t top = 0;       // end of the conflicting allocations seen so far
    std::optional<std::uint64_t> best_offset;
    std::uint64_t best_gap = std::numeric_limits<std::uint64_t>::max();
    for (std::size_t p : placed) {
      if (!overlap_in_time(r.lifetimes[a], r.lifetimes[p])) continue;
      const std::uint64_t at = out.offsets[p];
      if (at > top && at - top >= size[a] && at - top < best_gap) {
        best_gap = at - top;
        best_offset = top;
        if (gap == Gap::kLowest) break;  // placed is by offset: no lower gap follows
      }
      top = std::max(top, at + size[p]);
    }
    out.offsets[a] = best_offset.value_or(top);
    out.arena_bytes = std::max(out.arena_bytes, out.offsets[a] + size[a]);
    auto pos = std::upper_bound(placed.begin(), placed.end(), a, [&](std::size_t x, std::size_t y) {
      return out.offsets[x] < out.offsets[y];
    });
    placed.insert(pos, a);
  }
  return out;
}

// In schedule order, like an allocator with a best-fit free list that knows
// nothing ahead: O(n log n). Frees at a step come before that step's
// allocations, since lifetimes [start, end) that merely touch may share.
Placement place_in_order(const Replay& r, const std::vector<std::uint64_t>& size) {
  const std::size_t n = r.allocations.size();
  Placement out;
  out.offsets.assign(n, 0);
  std::vector<std::size_t> by_end(n);
  std::iota(by_end.begin(), by_end.end(), std::size_t{0});
  std::stable_sort(by_end.begin(), by_end.end(), [&](std::size_t a, std::size_t b) {
    return r.lifetimes[a].end < r.lifetimes[b].end;
  });
  std::map<std::uint64_t, std::uint64_t> free_at;               // offset -> bytes
  std::set<std::pair<std::uint64_t, std::uint64_t>> free_size;  // (bytes, offset)
  std::uint64_t top = 0;
  auto release = [&](std::uint64_t at, std::uint64_t bytes) {
    auto next = free_at.lower_bound(at);
    if (next != free_at.end() && next->first == at + bytes) {  // merge with the block after
      bytes += next->second;
      free_size.erase({next->second, next->first});
      next = free_at.erase(next);
    }
    if (next != free_at.begin()) {  // and with the block before
      auto prev = std::prev(next);
      if (prev->first + prev->second == at) {
        at = prev->first;
        bytes += prev->second;
        free_size.erase({prev->second, prev->first});
        free_at.erase(prev);
      }
    }
    if (at + bytes == top) {  // the arena's free tail is just the top
      top = at;
      return;
    }
    free_at[at] = bytes;
    free_size.insert({bytes, at});
  };
  std::size_t next_end = 0;
  // Allocations are in start order already (replay makes them so).
  for (std::size_t a = 0; a < n; ++a) {
    while (next_end < n && r.lifetimes[by_end[next_end]].end <= r.lifetimes[a].start) {
      const std::size_t gone = by_end[next_end++];
      if (size[gone] > 0 && r.lifetimes[gone].end > r.lifetimes[gone].start)
        release(out.offsets[gone], size[gone]);
    }
    if (size[a] == 0) continue;
    auto fit = free_size.lower_bound({size[a], 0});
    if (fit != free_size.end()) {
      const auto [bytes, at] = *fit;
      free_size.erase(fit);
      free_at.erase(at);
      out.offsets[a] = at;
      if (bytes > size[a]) {
        free_at[at + size[a]] = bytes - size[a];
        free_size.insert({bytes - size[a], at + size[a]});
      }
    } else {
      out.offsets[a] = top;
      top += size[a];
    }
    out.arena_bytes = std::max(out.arena_bytes, out.offsets[a] + size[a]);
  }
  return out;
}

// Every strategy's placement, in kStrategies' order; only the first past
// kLargestToTryEveryOrder (each is another O(n^2)). The placements are
// independent: on a large plan they run side by side (synth10k: 4 of them,
// a quarter of the planning time when one after the other).
std::vector<Placement> place_by_each_strategy(const Replay& r,
                                              const std::vector<std::uint64_t>& size) {
  constexpr std::size_t kWorthAThread = 2000;  // allocations
  const std::size_t n = size.size();
  std::vector<Placement> tried(n > kLargestToTryEveryOrder ? 1 : kStrategies.size());
  auto place = [&](std::size_t k) {
    tried[k] =
        place_by_size(r, size, placement_order(r, size, kStrategies[k].order), kStrategies[k].gap);
  };
  std::vector<std::jthread> others;
  for (std::size_t k = 1; k < tried.size(); ++k) {
    if (n < kWorthAThread)
      place(k);
    else
      others.emplace_back(place, k);
  }
  place(0);
  others.clear();  // joins
  return tried;
}

std::string alignment_problem(std::uint64_t alignment) {
  const bool power_of_two = alignment != 0 && (alignment & (alignment - 1)) == 0;
  if (power_of_two && alignment >= MemoryLayout::kDefaultAlignment) return {};
  return "memory_layout.alignment is " + std::to_string(alignment) + ": it must be a power of two" +
         " of at least " + std::to_string(MemoryLayout::kDefaultAlignment) +
         " (the device kernels' wide accesses fault on less)";
}

}  // namespace

std::string arena_budget_problem(const Plan& plan, const MemoryLayout& layout) {
  if (layout.arena_bytes <= plan.budget_bytes) return {};
  return "memory_layout.arena_bytes " + std::to_string(layout.arena_bytes) +
         " is over budget_bytes " + std::to_string(plan.budget_bytes) + " by " +
         std::to_string(layout.arena_bytes - plan.budget_bytes) +
         " bytes: the layout does not fit the device the plan was made for";
}

MemoryLayout compute_memory_layout(const ir::Graph& graph, const Plan& plan,
                                   std::uint64_t alignment, LayoutMethod method) {
  Replay r = replay(graph, plan);
  MemoryLayout layout;
  layout.alignment = std::max<std::uint64_t>(alignment, 1);
  layout.peak_bytes = r.peak_bytes;
  const std::size_t n = r.allocations.size();
  std::vector<std::uint64_t> size(n);
  for (std::size_t a = 0; a < n; ++a) size[a] = round_up(r.allocations[a].bytes, layout.alignment);
  if (method == LayoutMethod::kAuto)
    method = n <= kLargestToPlaceBySize ? LayoutMethod::kBySize : LayoutMethod::kInScheduleOrder;
  Placement best = place_in_order(r, size);
  if (method == LayoutMethod::kBySize) {
    // The online order is a candidate too; ties go to the offline orders.
    for (Placement& p : place_by_each_strategy(r, size))
      if (p.arena_bytes <= best.arena_bytes) best = std::move(p);
  }
  for (std::size_t a = 0; a < n; ++a) r.allocations[a].offset = best.offsets[a];
  layout.arena_bytes = best.arena_bytes;
  layout.allocations = std::move(r.allocations);
  return layout;
}

std::string memory_layout_problem(const ir::Graph& graph, const Plan& plan,
                                  const MemoryLayout& layout) {
  if (std::string why = alignment_problem(layout.alignment); !why.empty()) return why;
  Replay r = replay(graph, plan);
  if (layout.allocations.size() != r.allocations.size())
    return "memory_layout: " + std::to_string(layout.allocations.size()) +
           " allocations for a schedule that makes " + std::to_string(r.allocations.size());
  for (std::size_t a = 0; a < r.allocations.size(); ++a) {
    const Allocation& want = r.allocations[a];
    const Allocation& got = layout.allocations[a];
    if (got.step != want.step || got.tensor != want.tensor)
      return "memory_layout: allocation " + std::to_string(a) + " is " + describe(graph, got) +
             ", the schedule makes " + describe(graph, want) + " there";
    if (got.bytes != want.bytes)
      return "memory_layout: " + describe(graph, got) + " has " + std::to_string(got.bytes) +
             " bytes, the plan says " + std::to_string(want.bytes);
    if (got.offset % layout.alignment != 0)
      return "memory_layout: " + describe(graph, got) + " at offset " + std::to_string(got.offset) +
             " is not aligned to " + std::to_string(layout.alignment);
    if (got.offset > layout.arena_bytes || got.bytes > layout.arena_bytes - got.offset)
      return "memory_layout: " + describe(graph, got) + " ends past the arena (" +
             std::to_string(layout.arena_bytes) + " bytes)";
  }

  // Sweep the steps: drop what was freed, then check each new allocation
  // against its neighbours among the live ones (kept by offset).
  std::vector<std::size_t> by_start(r.allocations.size()), by_end(r.allocations.size());
  std::iota(by_start.begin(), by_start.end(), std::size_t{0});
  by_end = by_start;  // allocations are already in start order
  std::stable_sort(by_end.begin(), by_end.end(), [&](std::size_t a, std::size_t b) {
    return r.lifetimes[a].end < r.lifetimes[b].end;
  });
  std::map<std::uint64_t, std::size_t> live;  // offset -> allocation (non-empty ones)
  std::size_t next_end = 0;
  for (std::size_t a : by_start) {
    const Allocation& x = layout.allocations[a];
    while (next_end < by_end.size() && r.lifetimes[by_end[next_end]].end <= r.lifetimes[a].start) {
      const std::size_t gone = by_end[next_end++];
      auto it = live.find(layout.allocations[gone].offset);
      if (it != live.end() && it->second == gone) live.erase(it);
    }
    if (x.bytes == 0) continue;
    auto after = live.lower_bound(x.offset);
    if (after != live.end() && after->first < x.offset + x.bytes)
      return "memory_layout: " + describe(graph, x) + " overlaps " +
             describe(graph, layout.allocations[after->second]) + ", which is still live";
    if (after != live.begin()) {
      const Allocation& y = layout.allocations[std::prev(after)->second];
      if (y.offset + y.bytes > x.offset)
        return "memory_layout: " + describe(graph, x) + " overlaps " + describe(graph, y) +
               ", which is still live";
    }
    live[x.offset] = a;
  }
  return {};
}

}  // namespace memplan::planner
