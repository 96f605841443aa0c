#pragma once
// Monotone feasibility. A solver works on a model of the schedule, so for a
// budget between the floor memplan reports (the scheduled peak of evicting
// every candidate) and the baseline it may return a plan whose real
// schedule does not fit, although a plan at a lower budget did. The
// fallback starts from the floor's own assignment, scheduled at the budget
// asked for, and undoes evictions while the schedule still fits, most
// expensive first. Every budget at or above the reported floor then gets a
// plan.
#include <cstdint>
#include <optional>
#include <vector>

#include "ir/costs.h"
#include "ir/graph.h"
#include "planner/scheduler.h"
#include "solvers/problem.h"

namespace memplan::planner {

// Every candidate evicted: `first` where the candidate allows it, else the
// other option, else kept. Per candidate of `problem`.
std::vector<Decision> evict_all_choice(const solvers::Problem& problem, Decision first);

struct FallbackPlan {
  std::vector<Decision> choice;  // per candidate
  ScheduleResult schedule;       // fits the budget
  int schedules = 0;             // how many schedules the search made
};

struct FallbackOptions {
  int max_schedules = 96;
  volatile bool* interrupted = nullptr;
};

// A fitting plan from the evict-all assignments, or nullopt when neither
// fits `budget` (the budget is below the floor).
std::optional<FallbackPlan> fit_from_evict_all(const ir::Graph& graph, const ir::NodeCosts& costs,
                                               const solvers::Problem& problem,
                                               std::uint64_t budget,
                                               const FallbackOptions& options);

}  // namespace memplan::planner
