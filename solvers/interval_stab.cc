#include "solvers/interval_stab.h"

#include <algorithm>

namespace memplan::solvers {

template <class F>
void IntervalStab::for_each_node(const Interval& w, F&& f) const {
  const std::int64_t lo = std::max<std::int64_t>(w.begin, 0);
  const std::int64_t hi = std::min<std::int64_t>(w.end, steps_ - 1);
  if (lo > hi) return;
  std::size_t l = static_cast<std::size_t>(lo) + leaves_;
  std::size_t r = static_cast<std::size_t>(hi) + leaves_ + 1;
  for (; l < r; l >>= 1, r >>= 1) {
    if (l & 1) f(l++);
    if (r & 1) f(--r);
  }
}

IntervalStab::IntervalStab(std::int64_t steps, std::span<const Interval> windows)
    : steps_(std::max<std::int64_t>(steps, 0)) {
  while (leaves_ < static_cast<std::size_t>(steps_)) leaves_ <<= 1;
  // Two passes (count, then place) keep every node's ids in one array.
  start_.assign(2 * leaves_ + 1, 0);
  for (const Interval& w : windows) for_each_node(w, [&](std::size_t node) { ++start_[node + 1]; });
  for (std::size_t node = 1; node < start_.size(); ++node) start_[node] += start_[node - 1];
  ids_.resize(start_.back());
  std::vector<std::size_t> next(start_.begin(), start_.end() - 1);
  for (std::size_t k = 0; k < windows.size(); ++k)
    for_each_node(windows[k], [&](std::size_t node) { ids_[next[node]++] = k; });
}

}  // namespace memplan::solvers
