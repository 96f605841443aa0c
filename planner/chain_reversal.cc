#include "planner/chain_reversal.h"

#include <algorithm>
#include <stdexcept>

namespace memplan::planner::detail {
namespace {

std::uint64_t add(std::uint64_t a, std::uint64_t b) {
  return a == ChainReversal::kNever || b == ChainReversal::kNever ? ChainReversal::kNever : a + b;
}

}  // namespace

ChainReversal::ChainReversal(std::size_t max_length, std::size_t max_slots)
    : length_(max_length),
      slots_(std::min(max_slots, max_length)),
      cost_((max_length + 1) * (slots_ + 1), kNever),
      split_(cost_.size(), 1) {
  for (std::size_t c = 0; c <= slots_; ++c) cost_[at(0, c)] = 0;
  for (std::size_t c = 1; c <= slots_; ++c) {
    for (std::size_t n = 1; n <= length_; ++n) {
      std::uint64_t best = kNever;
      std::uint32_t best_m = 1;
      // m = 1 needs one slot (y_1 beside the base); m >= 2 two.
      const std::size_t top = c >= 2 ? n : 1;
      for (std::size_t m = 1; m <= top; ++m) {
        const std::uint64_t v = add(m, add(cost_[at(n - m, c - 1)], cost_[at(m - 1, c)]));
        if (v < best) {
          best = v;
          best_m = static_cast<std::uint32_t>(m);
        }
      }
      cost_[at(n, c)] = best;
      split_[at(n, c)] = best_m;
    }
  }
}

std::uint64_t ChainReversal::remakes(std::size_t n, std::size_t c) const {
  if (n > length_) throw std::out_of_range("ChainReversal: run longer than the table");
  return cost_[at(n, std::min(c, slots_))];
}

std::size_t ChainReversal::checkpoint(std::size_t n, std::size_t c) const {
  if (n > length_ || n == 0) throw std::out_of_range("ChainReversal: no such run");
  return split_[at(n, std::min(c, slots_))];
}

}  // namespace memplan::planner::detail
