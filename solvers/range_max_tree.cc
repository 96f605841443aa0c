#include "solvers/range_max_tree.h"

#include <algorithm>

namespace memplan::solvers {

RangeMaxTree::RangeMaxTree(const std::vector<std::int64_t>& values)
    : n_(static_cast<std::int64_t>(values.size())), tree_(4 * values.size() + 4, INT64_MIN), lazy_(tree_.size(), 0) {
  if (n_ > 0) build(1, 0, n_ - 1, values);
}

void RangeMaxTree::build(std::size_t node, std::int64_t l, std::int64_t r, const std::vector<std::int64_t>& v) {
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
void RangeMaxTree::add(std::size_t node, std::int64_t l, std::int64_t r, std::int64_t lo, std::int64_t hi,
                       std::int64_t d) {
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

}  // namespace memplan::solvers
