#pragma once
// A timeline of integers with range add, range max and "the last index in a
// range above a threshold", each O(log n): what the prefetch look-ahead and
// the over-budget repair ask of a memory timeline.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

namespace memplan::planner::detail {

// Each node's add applies to its whole subtree and is never pushed down, so
// a query carries the sum of the adds on its path. Ranges are inclusive.
class MaxAddTree {
 public:
  template <typename T>
  explicit MaxAddTree(const std::vector<T>& values)
      : n_(values.size()), max_(4 * n_ + 4, 0), add_(4 * n_ + 4, 0) {
    if (n_ > 0) build(1, 0, n_ - 1, values);
  }

  std::size_t size() const { return n_; }
  void add(std::size_t l, std::size_t r, std::int64_t v) { add(1, 0, n_ - 1, l, r, v); }
  std::int64_t max() const { return max_[1]; }
  std::int64_t max(std::size_t l, std::size_t r) const { return max(1, 0, n_ - 1, l, r); }

  // The first index holding the overall maximum.
  std::size_t first_argmax() const {
    std::size_t node = 1, lo = 0, hi = n_ - 1;
    std::int64_t target = max_[1];
    while (lo < hi) {
      target -= add_[node];
      const std::size_t mid = lo + (hi - lo) / 2;
      if (max_[2 * node] == target) {
        node = 2 * node;
        hi = mid;
      } else {
        node = 2 * node + 1;
        lo = mid + 1;
      }
    }
    return lo;
  }

  // The largest index in [l, r] whose value exceeds thr, or -1.
  std::int64_t last_above(std::size_t l, std::size_t r, std::int64_t thr) const {
    return last_above(1, 0, n_ - 1, l, r, thr);
  }

  // Every value, in O(n).
  std::vector<std::int64_t> values() const {
    std::vector<std::int64_t> out(n_);
    if (n_ > 0) collect(1, 0, n_ - 1, 0, out);
    return out;
  }

 private:
  template <typename T>
  void build(std::size_t node, std::size_t lo, std::size_t hi, const std::vector<T>& v) {
    if (lo == hi) {
      max_[node] = static_cast<std::int64_t>(v[lo]);
      return;
    }
    const std::size_t mid = lo + (hi - lo) / 2;
    build(2 * node, lo, mid, v);
    build(2 * node + 1, mid + 1, hi, v);
    max_[node] = std::max(max_[2 * node], max_[2 * node + 1]);
  }

  void add(std::size_t node, std::size_t lo, std::size_t hi, std::size_t l, std::size_t r,
           std::int64_t v) {
    if (r < lo || hi < l) return;
    if (l <= lo && hi <= r) {
      max_[node] += v;
      add_[node] += v;
      return;
    }
    const std::size_t mid = lo + (hi - lo) / 2;
    add(2 * node, lo, mid, l, r, v);
    add(2 * node + 1, mid + 1, hi, l, r, v);
    max_[node] = std::max(max_[2 * node], max_[2 * node + 1]) + add_[node];
  }

  std::int64_t max(std::size_t node, std::size_t lo, std::size_t hi, std::size_t l,
                   std::size_t r) const {
    if (r < lo || hi < l) return std::numeric_limits<std::int64_t>::min();
    if (l <= lo && hi <= r) return max_[node];
    const std::size_t mid = lo + (hi - lo) / 2;
    return std::max(max(2 * node, lo, mid, l, r), max(2 * node + 1, mid + 1, hi, l, r)) +
           add_[node];
  }

  std::int64_t last_above(std::size_t node, std::size_t lo, std::size_t hi, std::size_t l,
                          std::size_t r, std::int64_t thr) const {
    if (r < lo || hi < l || max_[node] <= thr) return -1;
    if (lo == hi) return static_cast<std::int64_t>(lo);
    thr -= add_[node];
    const std::size_t mid = lo + (hi - lo) / 2;
    const std::int64_t right = last_above(2 * node + 1, mid + 1, hi, l, r, thr);
    return right >= 0 ? right : last_above(2 * node, lo, mid, l, r, thr);
  }

  void collect(std::size_t node, std::size_t lo, std::size_t hi, std::int64_t above,
               std::vector<std::int64_t>& out) const {
    if (lo == hi) {
      out[lo] = max_[node] + above;
      return;
    }
    above += add_[node];
    const std::size_t mid = lo + (hi - lo) / 2;
    collect(2 * node, lo, mid, above, out);
    collect(2 * node + 1, mid + 1, hi, above, out);
  }

  std::size_t n_;
  std::vector<std::int64_t> max_, add_;
};

}  // namespace memplan::planner::detail
