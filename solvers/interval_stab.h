#pragma once
// Which of a fixed set of step windows contain a given step. The greedy's
// repair asks this once per move; scanning every candidate instead made it
// O(C) per move and O(C^2) in all.
#include <cstdint>
#include <span>
#include <vector>

#include "solvers/problem.h"

namespace memplan::solvers {

class IntervalStab {
 public:
  // Window k of `windows` is reported as id k; empty windows never are.
  // Steps outside [0, steps) are not indexed.
  IntervalStab(std::int64_t steps, std::span<const Interval> windows);

  // Calls f(id) for every window containing step s, in no particular order.
  // O(log S + the windows reported).
  template <class F>
  void for_each_containing(std::int64_t s, F&& f) const {
    if (s < 0 || s >= steps_) return;
    for (std::size_t node = static_cast<std::size_t>(s) + leaves_; node >= 1; node >>= 1)
      for (std::size_t e = start_[node]; e < start_[node + 1]; ++e) f(ids_[e]);
  }

 private:
  // Each window sits in the O(log S) nodes of a bottom-up segment tree that
  // together cover it; a point lies under exactly one leaf-to-root path.
  template <class F>
  void for_each_node(const Interval& w, F&& f) const;

  std::int64_t steps_ = 0;
  std::size_t leaves_ = 1;
  std::vector<std::size_t> start_;  // per node: its first entry in ids_ (CSR)
  std::vector<std::size_t> ids_;
};

}  // namespace memplan::solvers
