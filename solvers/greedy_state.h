#pragma once
// The greedy solver's working state (greedy_solver.cc): which option each
// candidate has, the per-step excess over budget, the link loads and every
// term of the objective, kept in step with every move so that a move and a
// look at the objective each cost O(log S), not O(C).
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "solvers/decision.h"
#include "solvers/problem.h"
#include "solvers/range_max_tree.h"

namespace memplan::solvers {

class GreedyState {
 public:
  explicit GreedyState(const Problem& p);

  const std::vector<Decision>& choice() const { return choice_; }
  bool fits() const { return excess_.max() <= 0; }
  std::int64_t worst() const { return excess_.max(); }
  std::int64_t worst_step() const { return excess_.argmax(); }
  bool covers_excess(std::size_t i, Decision d) const {
    const Interval* g = gap(i, d);
    return g != nullptr && !g->empty() && excess_.max(g->begin, g->end) > 0;
  }
  void set(std::size_t i, Decision d);
  // Whether a fitting plan still fits with candidate i kept, where that is
  // known without the move: i is in no chain hold, so keeping it only puts
  // its bytes back over its window. std::nullopt: only the move can tell.
  std::optional<bool> fits_if_kept(std::size_t i) const;
  double cost(std::size_t i, Decision d) const {
    const Candidate& c = p_.candidates[i];
    return d == Decision::kSwap        ? c.swap_exposed_seconds
           : d == Decision::kRecompute ? c.recompute_seconds
                                       : 0.0;
  }
  // Cost of moving candidate i to option d, including what it adds to (or
  // takes from) the link excess: swaps past the hiding compute cost in full.
  double marginal(std::size_t i, Decision d) const;
  // Whether the copies chosen fill most of the compute that hides them.
  bool link_busy() const {
    return out_ > 0.9 * p_.forward_seconds || in_ > 0.9 * p_.backward_seconds;
  }
  double objective() const {
    return hold_seconds_ - saved_ + cost_sum_ + std::max(0.0, out_ - p_.forward_seconds) +
           std::max(0.0, in_ - p_.backward_seconds);
  }
  const Interval* gap(std::size_t i, Decision d) const {
    const Candidate& c = p_.candidates[i];
    return d == Decision::kSwap        ? &c.swap_gap
           : d == Decision::kRecompute ? &c.recompute_gap
                                       : nullptr;
  }

 private:
  double saving_change(std::size_t i, Decision d) const;
  double hold_time_change(std::size_t i, Decision d) const;
  void apply(std::size_t i, Decision d, int sign);
  void apply_holds(std::size_t i, int sign);

  const Problem& p_;
  std::vector<Decision> choice_;
  RangeMaxTree excess_;
  std::vector<std::pair<std::size_t, std::size_t>> groups_;  // hold_groups(p)
  std::vector<std::vector<std::size_t>> groups_of_;          // per candidate: groups it reads or is
  std::vector<std::vector<std::size_t>> shared_of_;          // per candidate: shared steps it runs
  std::vector<std::int64_t> runs_;                           // per shared step: recomputed readers
  double saved_ = 0;                                         // shared_step_saving of choice_
  double hold_seconds_ = 0;                                  // hold_seconds of choice_
  double cost_sum_ = 0;                                      // sum of cost(i, choice_[i])
  double out_ = 0, in_ = 0;
};

}  // namespace memplan::solvers
