#pragma once
// The fewest remakes that hand a run of remade tensors y_1..y_n to a
// backward that reads them last first (y_n, then y_{n-1}, …), from a base
// y_0 that stays resident, when at most c of them may be resident at once.
// This is binomial checkpointing (Griewank and Walther's "revolve") in our
// memory model: making y_j reads y_{j-1}, so an advance holds two states at
// a time where revolve overwrites one in place, and every y_j was freed
// after the forward, so each is remade at least once. The recursion: advance
// from the base to a checkpoint y_m (m remakes, two slots), reverse
// y_{m+1..n} from it with c-1 slots, then y_1..y_{m-1} from the base with c.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

namespace memplan::planner::detail {

class ChainReversal {
 public:
  static constexpr std::uint64_t kNever = std::numeric_limits<std::uint64_t>::max();

  // Every run up to `max_length` tensors and `max_slots` slots.
  // O(max_length² · max_slots) time, O(max_length · max_slots) memory.
  ChainReversal(std::size_t max_length, std::size_t max_slots);

  // kNever when no schedule exists: c = 0, or c = 1 and n >= 2 (an advance
  // past y_1 needs two slots). n when c >= n: each remade once and held.
  std::uint64_t remakes(std::size_t n, std::size_t c) const;
  // The m of the best first advance (the smallest among the best); 1 when
  // c >= n (the whole run is then made in one advance, each tensor held).
  // Only for remakes(n, c) != kNever and n >= 1.
  std::size_t checkpoint(std::size_t n, std::size_t c) const;

 private:
  std::size_t at(std::size_t n, std::size_t c) const { return n * (slots_ + 1) + c; }

  std::size_t length_;
  std::size_t slots_;
  std::vector<std::uint64_t> cost_;
  std::vector<std::uint32_t> split_;
};

}  // namespace memplan::planner::detail
