#include "planner/baseline_plan.h"

#include "ir/liveness.h"
#include "util/errors.h"

namespace memplan::planner {

std::vector<Step> baseline_schedule(const ir::Graph& graph) {
  // ir::Liveness is the baseline's own definition of when each tensor dies,
  // so this schedule and ir::baseline_memory agree by construction.
  ir::Liveness liveness(graph);
  std::vector<Step> schedule;
  schedule.reserve(graph.nodes().size() + graph.tensors().size());
  for (ir::NodeId n = 0; n < graph.nodes().size(); ++n) {
    schedule.push_back({StepOp::kCompute, n});
    for (ir::TensorId t : liveness.freed_after(n)) schedule.push_back({StepOp::kFree, t});
  }
  return schedule;
}

Plan baseline_plan(const ir::Graph& graph, const ir::NodeCosts& costs,
                   const BaselinePlanOptions& options) {
  if (costs.seconds.size() != graph.nodes().size())
    throw InputError("baseline plan: costs give " + std::to_string(costs.seconds.size()) +
                     " node times for a graph of " + std::to_string(graph.nodes().size()) +
                     " nodes");
  PlanHeader header{options.model_path,
                    options.model_sha256,
                    options.budget_bytes.value_or(costs.device.memory_bytes),
                    {}};
  Plan plan = assemble_plan(graph, costs, std::move(header), baseline_schedule(graph), {});
  plan.solver.name = "baseline";
  plan.solver.status = to_string(solvers::SolveStatus::kHeuristic);
  plan.solver.objective_seconds = plan.predicted.iteration_seconds;
  plan.solver.solve_seconds = 0;  // nothing is solved; a fixed 0 keeps files reproducible
  return plan;
}

}  // namespace memplan::planner
