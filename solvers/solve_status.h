#pragma once
// How far a solver's answer is proven: one type where callers branch on it,
// the names only where it is written out (plan.json, notes, reports).
#include <cstdint>
#include <string_view>

namespace memplan::solvers {

enum class SolveStatus : std::uint8_t {
  kOptimal,    // proven best for the model
  kFeasible,   // fits, not proven best (a coarse ILP, a plan another solver found)
  kTimeLimit,  // fits; the ILP stopped at its limit
  kHeuristic,  // fits; no proof sought
  kInfeasible  // the model found nothing that fits: the best effort
};

// The names plan.json's solver.status uses (docs/plan.schema.json), which
// never holds infeasible: a plan handed out is at worst a best effort.
constexpr std::string_view to_string(SolveStatus s) {
  switch (s) {
    case SolveStatus::kOptimal:
      return "optimal";
    case SolveStatus::kFeasible:
      return "feasible";
    case SolveStatus::kTimeLimit:
      return "time_limit";
    case SolveStatus::kHeuristic:
      return "heuristic";
    case SolveStatus::kInfeasible:
      return "infeasible";
  }
  return "infeasible";
}

}  // namespace memplan::solvers
