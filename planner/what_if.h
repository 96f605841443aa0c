#pragma once
// `memplan simulate`'s question, answered by the planner: what peak and
// iteration time would these decisions, or this plan's schedule, give under
// a budget, and where would memory first go over it? The CLI only reads the
// inputs and prints what comes back.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/costs.h"
#include "ir/graph.h"
#include "planner/plan.h"
#include "planner/simulator.h"

namespace memplan::planner {

struct WhatIf {
  Plan plan;
  SimResult sim;
  bool fits = true;
  std::string diagnosis;               // why it does not fit; one line
  std::vector<std::string> fell_back;  // tensors asked swap/recompute, applied keep
};

struct WhatIfModel {
  std::string path;    // model.path of the plan made
  std::string sha256;  // of the model file's bytes
  // Where the decisions or the plan came from, for messages.
  std::string source;
};

// Decisions by TensorId, scheduled as `plan` schedules them (in the planning
// order, so a plan's own decisions reproduce its schedule) and checked
// against every rule but the budget. Throws InvalidPlanError if the
// scheduler's schedule breaks one (a bug).
WhatIf what_if_decisions(const ir::Graph& graph, const ir::NodeCosts& costs,
                         const std::vector<Decision>& requested, std::uint64_t budget_bytes,
                         const WhatIfModel& model);

// A plan as read, perhaps edited by hand: its predicted figures and budget
// are not held against it, every schedule rule is (InvalidPlanError). With
// `budget_bytes` it is judged against that budget instead of its own.
WhatIf what_if_plan(const ir::Graph& graph, Plan plan, std::optional<std::uint64_t> budget_bytes,
                    const std::string& source);

// The first step over `budget_bytes`, as one line naming it; for a plan
// whose start state is over already, says so.
std::string first_over_budget(const ir::Graph& graph, const Plan& plan, const SimResult& sim,
                              std::uint64_t budget_bytes);

}  // namespace memplan::planner
