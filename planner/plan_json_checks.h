#pragma once
// What plan_to_json() and plan_file_text() both check before writing a
// plan: they must refuse the same plans with the same messages.
#include <string>
#include <string_view>

#include "ir/graph.h"
#include "planner/plan.h"

namespace memplan::planner::plan_json_checks {

// `v`, or InvalidPlanError naming `key` when JSON cannot hold it (NaN,
// infinity: nlohmann would write null, and the reader rejects that).
double finite(double v, const std::string& key);

// InvalidPlanError when the plan's vectors or ids do not fit the graph.
void check_fits(const ir::Graph& graph, const Plan& plan);

// A name as a JSON string, for key paths in messages.
std::string quote_name(std::string_view name);

}  // namespace memplan::planner::plan_json_checks
