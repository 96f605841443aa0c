#include "planner/prefetch.h"

#include <algorithm>
#include <limits>

#include "solvers/range_max_tree.h"

namespace memplan::planner::detail {
namespace {

// The earliest slot the look-ahead window allows for a swap_in that should
// start by `latest_start` (estimated compute-stream time) to reach its
// reader at slot d, when the h2d stream is estimated busy until `h2d_busy`.
std::uint32_t window_start(const Skeleton& s, std::uint32_t d, double latest_start,
                           std::size_t window_steps, double h2d_busy) {
  // By steps: at most window_steps compute/recompute steps between it and d.
  const std::uint32_t c = s.computes[d];
  const std::uint32_t target = c > window_steps ? c - static_cast<std::uint32_t>(window_steps) : 0;
  const auto by_steps = static_cast<std::uint32_t>(
      std::lower_bound(s.computes.begin(), s.computes.begin() + d + 1, target) -
      s.computes.begin());
  // By time: back to where it should start. When the copies queued before
  // it already run past that point, no window is wide enough: only the
  // budget and the order limit it.
  if (h2d_busy > latest_start) return 0;
  const auto after = std::upper_bound(s.clock.begin(), s.clock.begin() + d + 1, latest_start);
  const auto by_time =
      after == s.clock.begin() ? 0u : static_cast<std::uint32_t>(after - s.clock.begin() - 1);
  return std::min(by_steps, by_time);
}

}  // namespace

Placed place_swap_ins(const ir::Graph& graph, const Skeleton& skeleton,
                      const PrefetchOptions& options) {
  const std::size_t slots = skeleton.level.size();
  solvers::RangeMaxTree timeline(
      std::vector<std::int64_t>(skeleton.level.begin(), skeleton.level.end()));
  const std::uint64_t budget =
      std::min<std::uint64_t>(options.budget_bytes, std::numeric_limits<std::int64_t>::max());

  const std::size_t n = skeleton.swap_ins.size();
  std::vector<double> seconds(n, 0.0);
  for (std::size_t i = 0; i < n; ++i)
    if (options.h2d_bytes_per_s > 0)
      seconds[i] = static_cast<double>(graph.tensor(skeleton.swap_ins[i].tensor).bytes) /
                   options.h2d_bytes_per_s;
  // The h2d stream runs the copies in order, so each must start early
  // enough for itself and every copy behind it to end before its reader:
  // the latest start times, from the last copy back (estimated times).
  std::vector<double> latest_start(n, 0.0);
  double next_start = std::numeric_limits<double>::infinity();
  for (std::size_t i = n; i-- > 0;) {
    const double end = std::min(skeleton.clock[skeleton.swap_ins[i].deadline], next_start);
    latest_start[i] = next_start = end - seconds[i];
  }

  std::vector<std::uint32_t> placed(n);
  std::uint32_t previous = 0;
  double h2d_busy = 0;  // estimated end of the copies placed so far
  for (std::size_t i = 0; i < n; ++i) {
    const SwapInRequest& req = skeleton.swap_ins[i];
    const std::uint64_t b = graph.tensor(req.tensor).bytes;
    const std::uint32_t d = req.deadline;
    std::uint32_t lo =
        std::max({req.earliest, previous,
                  window_start(skeleton, d, latest_start[i], options.window_steps, h2d_busy)});
    lo = std::min(lo, d);
    std::uint32_t slot = d;
    if (lo < d && b <= budget) {
      // The earliest slot from which memory stays within budget up to d.
      const std::int64_t j = timeline.last_above(lo, d - 1, static_cast<std::int64_t>(budget - b));
      slot = j < 0 ? lo : static_cast<std::uint32_t>(j + 1);
    }
    if (slot < d) timeline.add(slot, d - 1, static_cast<std::int64_t>(b));
    placed[i] = slot;
    previous = slot;
    // The copy starts once issued (after the free before it) and the stream
    // is free; clock[] is the compute stream's estimate, stalls not counted.
    h2d_busy = std::max(h2d_busy, skeleton.clock[slot]) + seconds[i];
  }

  Placed out;
  out.schedule.reserve(skeleton.steps.size() + placed.size());
  std::vector<std::int64_t> state_step(slots, -1);  // the step whose state a slot is
  std::size_t r = 0;
  for (std::size_t k = 0; k < slots; ++k) {
    for (; r < placed.size() && placed[r] == k; ++r)
      out.schedule.push_back({StepOp::kSwapIn, skeleton.swap_ins[r].tensor});
    state_step[k] = static_cast<std::int64_t>(out.schedule.size()) - 1;
    if (k < skeleton.steps.size()) out.schedule.push_back(skeleton.steps[k]);
  }
  out.peak_bytes = static_cast<std::uint64_t>(timeline.max());
  out.level = timeline.values();
  out.peak_slot = static_cast<std::size_t>(timeline.argmax());
  out.peak_step = state_step[out.peak_slot];
  return out;
}

}  // namespace memplan::planner::detail
