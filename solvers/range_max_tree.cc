#include "solvers/range_max_tree.h"

#include <algorithm>

namespace memplan::solvers {

// Bottom-up (iterative) over a power-of-two tree: add and max walk two
// root paths instead of recursing, which is where the greedy's time went on
// a 100k-node graph (docs/bench-notes.md). Adds stay on the nodes they
// cover (never pushed down), so a const query changes nothing.
RangeMaxTree::RangeMaxTree(const std::vector<std::int64_t>& values)
    : n_(static_cast<std::int64_t>(values.size())) {
  while (leaves_ < values.size()) leaves_ *= 2;
  tree_.assign(2 * leaves_, INT64_MIN);
  lazy_.assign(2 * leaves_, 0);
  std::copy(values.begin(), values.end(), tree_.begin() + static_cast<std::ptrdiff_t>(leaves_));
  for (std::size_t node = leaves_ - 1; node >= 1; --node)
    tree_[node] = std::max(tree_[2 * node], tree_[2 * node + 1]);
}

void RangeMaxTree::apply(std::size_t node, std::int64_t delta) {
  tree_[node] += delta;
  lazy_[node] += delta;
}

void RangeMaxTree::rebuild_above(std::size_t node) {
  for (node /= 2; node >= 1; node /= 2)
    tree_[node] = std::max(tree_[2 * node], tree_[2 * node + 1]) + lazy_[node];
}

// The adds of every strict ancestor of `node`.
std::int64_t RangeMaxTree::pending_above(std::size_t node) const {
  std::int64_t sum = 0;
  for (node /= 2; node >= 1; node /= 2) sum += lazy_[node];
  return sum;
}

void RangeMaxTree::add(std::int64_t lo, std::int64_t hi, std::int64_t delta) {
  lo = std::max<std::int64_t>(lo, 0);
  hi = std::min(hi, n_ - 1);
  if (lo > hi) return;
  const std::size_t first = leaves_ + static_cast<std::size_t>(lo);
  const std::size_t last = leaves_ + static_cast<std::size_t>(hi);
  for (std::size_t l = first, r = last + 1; l < r; l /= 2, r /= 2) {
    if (l & 1) apply(l++, delta);
    if (r & 1) apply(--r, delta);
  }
  rebuild_above(first);
  rebuild_above(last);
}

// The nodes that tile [lo, hi] are gathered level by level. After each step
// up, everything gathered on the left lies under node l - 1 and everything
// on the right under node r, so their adds are what the gathered maxima
// still lack; the ancestors above where the walk ends add theirs at the end.
std::int64_t RangeMaxTree::max(std::int64_t lo, std::int64_t hi) const {
  lo = std::max<std::int64_t>(lo, 0);
  hi = std::min(hi, n_ - 1);
  if (lo > hi) return INT64_MIN;
  std::int64_t left = INT64_MIN, right = INT64_MIN;
  std::size_t l = leaves_ + static_cast<std::size_t>(lo);
  std::size_t r = leaves_ + static_cast<std::size_t>(hi) + 1;
  while (l < r) {
    if (l & 1) left = std::max(left, tree_[l++]);
    if (r & 1) right = std::max(right, tree_[--r]);
    l /= 2;
    r /= 2;
    if (left != INT64_MIN) left += lazy_[l - 1];
    if (right != INT64_MIN) right += lazy_[r];
  }
  if (left != INT64_MIN) left += pending_above(l - 1);
  if (right != INT64_MIN) right += pending_above(r);
  return std::max(left, right);
}

std::int64_t RangeMaxTree::argmax() const {
  if (n_ == 0) return -1;
  std::size_t node = 1;
  std::int64_t pending = 0;
  const std::int64_t target = tree_[1];
  while (node < leaves_) {
    pending += lazy_[node];
    // The left child always holds real leaves (padding is at the right end).
    node = tree_[2 * node] + pending == target ? 2 * node : 2 * node + 1;
  }
  return static_cast<std::int64_t>(node - leaves_);
}

std::int64_t RangeMaxTree::last_above(std::int64_t lo, std::int64_t hi,
                                      std::int64_t threshold) const {
  lo = std::max<std::int64_t>(lo, 0);
  hi = std::min(hi, n_ - 1);
  if (lo > hi) return -1;
  return last_above(1, 0, static_cast<std::int64_t>(leaves_) - 1, lo, hi, threshold);
}

std::int64_t RangeMaxTree::last_above(std::size_t node, std::int64_t l, std::int64_t r,
                                      std::int64_t lo, std::int64_t hi,
                                      std::int64_t threshold) const {
  if (hi < l || r < lo || tree_[node] <= threshold) return -1;
  if (l == r) return l;
  threshold -= lazy_[node];  // the children's values lack this node's add
  std::int64_t m = (l + r) / 2;
  std::int64_t right = last_above(2 * node + 1, m + 1, r, lo, hi, threshold);
  return right >= 0 ? right : last_above(2 * node, l, m, lo, hi, threshold);
}

std::vector<std::int64_t> RangeMaxTree::values() const {
  // covering[node]: the adds of the node and its ancestors, top down.
  std::vector<std::int64_t> covering(leaves_, 0);
  for (std::size_t node = 1; node < leaves_; ++node)
    covering[node] = lazy_[node] + covering[node / 2];
  std::vector<std::int64_t> out(static_cast<std::size_t>(n_));
  for (std::size_t i = 0; i < out.size(); ++i)
    out[i] = tree_[leaves_ + i] + covering[(leaves_ + i) / 2];
  return out;
}

}  // namespace memplan::solvers
