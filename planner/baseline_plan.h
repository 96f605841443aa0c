#pragma once
// The plan that keeps everything: the baseline of PLAN_FORMAT.md written as
// a schedule, so it can be validated, simulated and compared like any other.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/costs.h"
#include "ir/graph.h"
#include "planner/plan.h"
#include "planner/plan_assembly.h"  // fill_predicted, for the callers of both

namespace memplan::planner {

struct BaselinePlanOptions {
  std::string model_path;    // model.path as given
  std::string model_sha256;  // of the model file's bytes
  // The limit the plan is stated for; unset: the device's memory_bytes. A
  // baseline over it is written as it is, and `validate` reports it.
  std::optional<std::uint64_t> budget_bytes;
};

// Every node computed in graph order; right after the step that reads it
// last (right after it is made if nothing reads it), each node-made tensor
// that is not a graph output is freed.
std::vector<Step> baseline_schedule(const ir::Graph& graph);

// The baseline as a whole plan: decisions all keep, node_seconds and device
// from `costs`, solver "baseline" / "heuristic", predicted filled in.
Plan baseline_plan(const ir::Graph& graph, const ir::NodeCosts& costs,
                   const BaselinePlanOptions& options = {});

}  // namespace memplan::planner
