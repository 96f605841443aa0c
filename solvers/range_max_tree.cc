#include "solvers/range_max_tree.h"

#include <algorithm>

namespace memplan::solvers {

RangeMaxTree::RangeMaxTree(const std::vector<std::int64_t>& values)
    : n_(static_cast<std::int64_t>(values.size())),
      tree_(4 * values.size() + 4, INT64_MIN),
      lazy_(tree_.size(), 0) {
  if (n_ > 0) build(1, 0, n_ - 1, values);
}

void RangeMaxTree::build(std::size_t node, std::int64_t l, std::int64_t r,
                         const std::vector<std::int64_t>& v) {
  if (l == r) {
    tree_[node] = v[static_cast<std::size_t>(l)];
    return;
  }
  std::int64_t m = (l + r) / 2;
  build(2 * node, l, m, v);
  build(2 * node + 1, m + 1, r, v);
  tree_[node] = std::max(tree_[2 * node], tree_[2 * node + 1]);
}

void RangeMaxTree::add(std::int64_t lo, std::int64_t hi, std::int64_t delta) {
  lo = std::max<std::int64_t>(lo, 0);
  hi = std::min(hi, n_ - 1);
  if (lo > hi) return;
  add(1, 0, n_ - 1, lo, hi, delta);
}

// Lazy values stay on their node (never pushed down): a node's max already
// includes its own pending add, and queries add the pending values of the
// ancestors on the way down.
void RangeMaxTree::add(std::size_t node, std::int64_t l, std::int64_t r, std::int64_t lo,
                       std::int64_t hi, std::int64_t d) {
  if (hi < l || r < lo) return;
  if (lo <= l && r <= hi) {
    tree_[node] += d;
    lazy_[node] += d;
    return;
  }
  std::int64_t m = (l + r) / 2;
  add(2 * node, l, m, lo, hi, d);
  add(2 * node + 1, m + 1, r, lo, hi, d);
  tree_[node] = std::max(tree_[2 * node], tree_[2 * node + 1]) + lazy_[node];
}

std::int64_t RangeMaxTree::max(std::int64_t lo, std::int64_t hi) const {
  lo = std::max<std::int64_t>(lo, 0);
  hi = std::min(hi, n_ - 1);
  if (lo > hi) return INT64_MIN;
  return max(1, 0, n_ - 1, lo, hi);
}

std::int64_t RangeMaxTree::max(std::size_t node, std::int64_t l, std::int64_t r, std::int64_t lo,
                               std::int64_t hi) const {
  if (hi < l || r < lo) return INT64_MIN;
  if (lo <= l && r <= hi) return tree_[node];
  std::int64_t m = (l + r) / 2;
  std::int64_t best = std::max(max(2 * node, l, m, lo, hi), max(2 * node + 1, m + 1, r, lo, hi));
  return best == INT64_MIN ? best : best + lazy_[node];
}

std::int64_t RangeMaxTree::argmax() const {
  if (n_ == 0) return -1;
  std::size_t node = 1;
  std::int64_t l = 0, r = n_ - 1, pending = 0;
  const std::int64_t target = tree_[1];
  while (l < r) {
    pending += lazy_[node];
    std::int64_t m = (l + r) / 2;
    if (tree_[2 * node] + pending == target) {
      node = 2 * node;
      r = m;
    } else {
      node = 2 * node + 1;
      l = m + 1;
    }
  }
  return l;
}

std::int64_t RangeMaxTree::last_above(std::int64_t lo, std::int64_t hi,
                                      std::int64_t threshold) const {
  lo = std::max<std::int64_t>(lo, 0);
  hi = std::min(hi, n_ - 1);
  if (lo > hi) return -1;
  return last_above(1, 0, n_ - 1, lo, hi, threshold);
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
  std::vector<std::int64_t> out(static_cast<std::size_t>(n_));
  if (n_ > 0) collect(1, 0, n_ - 1, 0, out);
  return out;
}

void RangeMaxTree::collect(std::size_t node, std::int64_t l, std::int64_t r, std::int64_t pending,
                           std::vector<std::int64_t>& out) const {
  if (l == r) {
    out[static_cast<std::size_t>(l)] = tree_[node] + pending;
    return;
  }
  pending += lazy_[node];
  std::int64_t m = (l + r) / 2;
  collect(2 * node, l, m, pending, out);
  collect(2 * node + 1, m + 1, r, pending, out);
}

}  // namespace memplan::solvers
