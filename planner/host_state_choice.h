#pragma once
// PlanRequest::StateOnHost::kAuto's choice between the plan without the
// training state on the host and the plan with it (plan_search.cc).
#include <string>

#include "planner/plan_search.h"
#include "planner/planning_order.h"

namespace memplan::planner {

// Seconds to copy every tensor with_state_on_host() would keep on the host
// in and out once, on idle links: about what keeping it there costs where
// none of the copies hides under compute. The plan with it is searched only
// where the plan without it does not fit or costs more than this.
double host_state_copy_seconds(const PlanningGraph& pg);

// Whether the plan with the state on the host is worth a search after
// `without`: it does not fit, or costs more than host_state_copy_seconds.
bool host_state_worth_searching(const PlanOutcome& without, const PlanningGraph& pg);

// Why the plan with the state on the host is handed out, or "" where the
// one without it stays: a fit beats no fit, a lower peak beats a higher
// one where neither fits, and between two fits the faster wins.
std::string host_state_wins(const PlanOutcome& without, const PlanOutcome& on_host);

}  // namespace memplan::planner
