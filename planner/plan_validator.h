#pragma once
// Checks every rule of PLAN_FORMAT.md on a plan against its graph.
#include <cstdint>
#include <optional>
#include <string>

#include "ir/graph.h"
#include "planner/plan.h"

namespace memplan::planner {

struct Validation {
  bool valid = true;
  // The first rule broken: which step (index into schedule, -1 for the plan
  // as a whole) and what, in one line naming the node or tensor.
  std::int64_t step = -1;
  std::string message;
  std::uint64_t peak_bytes = 0;  // recomputed from the schedule
};

// Rules: every node computed by exactly one compute step; recompute only
// after compute and only of non-random nodes (a planner rule, checked too);
// inputs resident at each compute/recompute; swap_out of a resident tensor;
// swap_in of a non-resident tensor with a host copy that no in-place write
// made stale; free of a resident tensor; graph outputs resident at the end;
// tensor bytes equal the graph's; predicted.peak_bytes equals the
// recomputed peak and is <= budget_bytes; predicted timing equals
// simulate() (to 1e-9 relative); initial_host, where the plan has it, lists
// graph inputs or initializers that are not graph outputs or aliases,
// sorted and once each, and each of them ends not resident with a host copy
// made after its last in-place write; a memory_layout, where the plan has
// one, passes memory_layout_problem() and its arena fits budget_bytes.
Validation validate(const ir::Graph& graph, const Plan& plan);

}  // namespace memplan::planner
