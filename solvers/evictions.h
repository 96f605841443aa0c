#pragma once
// Which ways off the device a plan may use (`--allow`): one type for the
// problem builder, the restricted baselines, the greedy's recompute-only
// run and the planner's request, which all restrict the same two options.
#include <vector>

#include "solvers/decision.h"
#include "solvers/problem.h"

namespace memplan::solvers {

struct Evictions {
  bool swap = true;
  bool recompute = true;

  static constexpr Evictions both() { return {true, true}; }
  static constexpr Evictions swap_only() { return {true, false}; }
  static constexpr Evictions recompute_only() { return {false, true}; }

  // Where only one is allowed, a solver's search between the two (a
  // recompute-only second opinion, the recompute-only ILP) has nothing to add.
  constexpr bool permits_both() const { return swap && recompute; }
  constexpr bool permits(Decision d) const {
    return d == Decision::kKeep || (d == Decision::kSwap ? swap : recompute);
  }
  friend constexpr bool operator==(Evictions, Evictions) = default;
};

// Takes the options `evictions` does not permit off each candidate of
// `problem`, so that a solver of the whole problem solves the restricted
// one. A warm start of one entry per candidate keeps only the choices its
// candidate still allows (the others become kKeep): a solver must not
// start from an assignment it could not return.
void restrict_evictions(Problem& problem, Evictions evictions,
                        std::vector<Decision>* warm_start = nullptr);

}  // namespace memplan::solvers
