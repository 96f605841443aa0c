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

// The evict-all assignments the floor and the fallback start from: every
// candidate recomputed (swapped where it cannot be), every candidate
// swapped (recomputed where it cannot be), and vDNN's: every candidate that
// can be swapped swapped, the rest kept, swap_ins at most one step ahead
// (rebuilding what cannot be swapped holds chain inputs, which can peak
// higher than keeping it).
struct EvictAll {
  Decision first = Decision::kRecompute;
  bool fall_back = true;  // to the other option where `first` is not allowed
  std::optional<std::size_t> prefetch_window;
};
std::vector<EvictAll> evict_all_variants();

// Every candidate evicted the way `v` says. Per candidate of `problem`.
std::vector<Decision> evict_all_choice(const solvers::Problem& problem, const EvictAll& v);

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
