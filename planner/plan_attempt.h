#pragma once
// What plan_search and solver_portfolio share: one solver's attempt at a
// budget, and the search's time limit (PlanRequest::deadline). Internal to
// planner/.
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "ir/costs.h"
#include "ir/graph.h"
#include "planner/plan.h"
#include "planner/plan_search.h"
#include "planner/scheduler.h"
#include "solvers/solver.h"

namespace memplan::planner::detail {

struct Attempt {
  solvers::Solution solution;
  ScheduleResult schedule;
  Plan plan;
  std::size_t rounds = 0;
  std::optional<double> seconds;   // simulated, when the schedule fits
  std::uint64_t model_budget = 0;  // the budget the solver saw
};

// One solver on the request's problem, with its tightening rounds, second
// problems and rescues, assembled into a plan (plan_search.cc).
Attempt run_solver(const ir::Graph& g, const ir::NodeCosts& costs, const PlanRequest& req,
                   const solvers::Solver& solver, const solvers::SolverOptions& base_options);

// Whether the search's time limit is spent (PlanRequest::deadline).
inline bool spent(const PlanRequest& req) {
  return req.deadline && std::chrono::steady_clock::now() >= *req.deadline;
}

inline constexpr const char* kSpentNote =
    "the search's time limit was spent: later ILP solves skipped";

// Appends `more` to a solver's or plan's note, "; " between.
inline void append_note(std::string& note, const std::string& more) {
  note += (note.empty() ? "" : "; ") + more;
}

// The same, unless the note says it already.
inline void append_note_once(std::string& note, const std::string& more) {
  if (note.find(more) == std::string::npos) append_note(note, more);
}

}  // namespace memplan::planner::detail
