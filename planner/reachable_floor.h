#pragma once
// The floor: the smallest peak any plan can reach, found by evicting every
// candidate. `plan` reports it where a budget cannot be met, and the
// layout's replans and the tests size budgets from it.
#include <cstdint>

#include "ir/costs.h"
#include "ir/graph.h"
#include "solvers/evictions.h"

namespace memplan::planner {

// The smallest peak memplan can reach with the allowed evictions: every
// candidate evicted (all recompute, or all swap, each falling back to the
// other where not allowed), scheduled; the lower of the two.
// With `state_on_host` (and offload_state and swaps), also with the
// training state kept on the host between iterations where that reaches
// lower.
std::uint64_t smallest_reachable_peak(const ir::Graph& graph, const ir::NodeCosts& costs,
                                      solvers::Evictions evictions, bool offload_state = true,
                                      bool state_on_host = false);

}  // namespace memplan::planner
