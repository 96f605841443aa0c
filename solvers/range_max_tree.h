#pragma once
// Range add / range max over steps, lazily: the greedy's view of how far
// each step is over budget, and the scheduler's memory timeline (prefetch
// look-ahead, over-budget repair), kept current as decisions change.
#include <cstdint>
#include <vector>

namespace memplan::solvers {

class RangeMaxTree {
 public:
  explicit RangeMaxTree(const std::vector<std::int64_t>& values);
  void add(std::int64_t lo, std::int64_t hi, std::int64_t delta);  // [lo, hi] inclusive
  std::int64_t max(std::int64_t lo, std::int64_t hi) const;
  std::int64_t max() const { return n_ == 0 ? INT64_MIN : tree_[1]; }
  // The first index holding the overall maximum.
  std::int64_t argmax() const;
  // The largest index in [lo, hi] whose value exceeds `threshold`, or -1.
  std::int64_t last_above(std::int64_t lo, std::int64_t hi, std::int64_t threshold) const;
  // Every value, in O(n).
  std::vector<std::int64_t> values() const;

 private:
  void apply(std::size_t node, std::int64_t delta);
  void rebuild_above(std::size_t node);
  std::int64_t pending_above(std::size_t node) const;
  std::int64_t last_above(std::size_t node, std::int64_t l, std::int64_t r, std::int64_t lo,
                          std::int64_t hi, std::int64_t threshold) const;

  std::int64_t n_ = 0;
  std::size_t leaves_ = 1;  // a power of two >= n_; leaf i is node leaves_ + i
  // tree_[node]: the subtree's max, with the adds of the node and its
  // descendants but not its ancestors'; lazy_[node]: the adds that covered
  // the node's whole range. Leaves past n_ hold INT64_MIN and are never added to.
  std::vector<std::int64_t> tree_, lazy_;
};

}  // namespace memplan::solvers
