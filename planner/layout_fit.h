#pragma once
// A plan whose memory layout fits its budget (PLAN_FORMAT: arena_bytes <=
// budget_bytes). The planner counts exact tensor bytes; the layout rounds
// each allocation to the alignment and loses what best fit cannot pack, so
// a plan at its budget can need a larger arena. Where it does, the plan is
// searched again for a budget lowered by the overshoot, a few times, and
// the plan keeps the budget it was asked for.
#include <cstdint>
#include <optional>

#include "ir/costs.h"
#include "ir/graph.h"
#include "planner/plan_search.h"

namespace memplan::planner {

struct LayoutFitOutcome {
  PlanOutcome outcome;  // outcome.plan carries its memory_layout when it fits
  bool layout_fits = false;
  std::uint64_t first_arena_bytes = 0;      // the layout of the plan for the asked budget
  int replans = 0;                          // searches at lowered budgets
  std::uint64_t planning_budget_bytes = 0;  // the budget the kept plan was searched for
};

inline constexpr int kMaxLayoutReplans = 3;
inline constexpr int kMaxLayoutBisections = 3;

// search_plan(), then the layout; when the arena overshoots, search_plan()
// for budget - (arena - peak), then less the overshoot too, until a layout
// fits or no plan does; last, the plan for the smallest reachable peak.
// Keeps the plan with the smallest arena when none fits. Once one fits
// after replans, up to `max_bisections` searches bisect the planning budget
// between it and the lowest that overshot, keeping the fastest plan whose
// layout fits (each replan or bisection counts in `replans`); on graphs of
// up to GreedySolver::kAlternativesMaxCandidates tensors.
LayoutFitOutcome search_plan_with_layout(const ir::Graph& graph, const ir::NodeCosts& costs,
                                         const PlanRequest& request,
                                         int max_replans = kMaxLayoutReplans,
                                         int max_bisections = kMaxLayoutBisections);

// The planning budget of the next replan after one at `lowered`, for the
// kept plan's layout (`arena_bytes` over its `peak_bytes`): budget - (arena -
// peak), or `lowered` less the overshoot (arena - budget) where that is
// lower; nullopt where nothing is left to plan with. `stalls`: the replans
// in a row whose arena did not come down; each multiplies the overshoot's
// step by kStalledStepFactor.
std::optional<std::uint64_t> next_planning_budget(std::uint64_t budget, std::uint64_t lowered,
                                                  std::uint64_t arena_bytes,
                                                  std::uint64_t peak_bytes, int stalls);
inline constexpr std::uint64_t kStalledStepFactor = 8;

// The smallest budget for which search_plan_with_layout() finds a plan
// whose layout fits: the arena of the plan for smallest_reachable_peak()
// (at least that peak); where the request may keep the training state on
// the host or not, the lower of the two floors. Plans once or twice per
// floor; for messages on the failure path.
std::uint64_t smallest_reachable_budget(const ir::Graph& graph, const ir::NodeCosts& costs,
                                        const PlanRequest& request);

}  // namespace memplan::planner
