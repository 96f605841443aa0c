#pragma once
// The one place a Plan is put together. Where its schedule and decisions
// come from (a solver and the scheduler, the baseline, a what-if, DTR) is
// the caller's business; the rest of the plan is made here alike for all:
// the model and device it is for, the sizes and times it states, and its
// predicted figures, simulated.
#include <cstdint>
#include <string>
#include <vector>

#include "ir/costs.h"
#include "ir/graph.h"
#include "planner/plan.h"

namespace memplan::planner {

struct PlanHeader {
  std::string model_path;    // model.path as given
  std::string model_sha256;  // of the model file's bytes
  std::uint64_t budget_bytes = 0;
  SolverInfo solver;
};

// What the simulator reads of a plan: node_seconds and device from
// `costs`, tensor_bytes from the graph, the schedule, and initial_host from
// the tensors the graph marks `starts_on_host`. For timing schedules
// that are not (yet) plans.
Plan timing_plan(const ir::Graph& graph, const ir::NodeCosts& costs, std::vector<Step> schedule);

// timing_plan() with the rest: the header, dims from the graph, decisions
// padded with keep to one per tensor, predicted filled in.
Plan assemble_plan(const ir::Graph& graph, const ir::NodeCosts& costs, PlanHeader header,
                   std::vector<Step> schedule, std::vector<Decision> decisions);

// Fills plan.predicted: peak and timing from simulate(), the baseline's peak
// from ir::baseline_memory and its iteration as the sum of node_seconds.
void fill_predicted(const ir::Graph& graph, Plan& plan);

}  // namespace memplan::planner
