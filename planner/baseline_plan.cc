#include "planner/baseline_plan.h"

#include "ir/baseline_memory.h"
#include "ir/liveness.h"
#include "planner/simulator.h"
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

void fill_predicted(const ir::Graph& graph, Plan& plan) {
  SimResult sim = simulate(graph, plan);
  plan.predicted.peak_bytes = sim.peak_bytes;
  plan.predicted.iteration_seconds = sim.iteration_seconds;
  plan.predicted.compute_seconds = sim.compute_seconds;
  plan.predicted.baseline_peak_bytes = ir::baseline_memory(graph, ir::Liveness(graph)).peak_bytes;
  double baseline_seconds = 0;
  for (double s : plan.node_seconds) baseline_seconds += s;
  plan.predicted.baseline_iteration_seconds = baseline_seconds;
}

Plan baseline_plan(const ir::Graph& graph, const ir::NodeCosts& costs,
                   const BaselinePlanOptions& options) {
  if (costs.seconds.size() != graph.nodes().size())
    throw InputError("baseline plan: costs give " + std::to_string(costs.seconds.size()) +
                     " node times for a graph of " + std::to_string(graph.nodes().size()) +
                     " nodes");
  Plan plan;
  plan.model_path = options.model_path;
  plan.model_sha256 = options.model_sha256;
  plan.dims = graph.dims;
  plan.device = costs.device;
  plan.budget_bytes = options.budget_bytes.value_or(costs.device.memory_bytes);
  plan.node_seconds = costs.seconds;
  plan.tensor_bytes.reserve(graph.tensors().size());
  for (const ir::Tensor& t : graph.tensors()) plan.tensor_bytes.push_back(t.bytes);
  plan.decisions.assign(graph.tensors().size(), Decision::kKeep);
  plan.schedule = baseline_schedule(graph);
  fill_predicted(graph, plan);
  plan.solver.name = "baseline";
  plan.solver.status = to_string(solvers::SolveStatus::kHeuristic);
  plan.solver.objective_seconds = plan.predicted.iteration_seconds;
  plan.solver.solve_seconds = 0;  // nothing is solved; a fixed 0 keeps files reproducible
  return plan;
}

}  // namespace memplan::planner
