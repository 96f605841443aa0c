#include "planner/plan_assembly.h"

#include <utility>

#include "ir/baseline_memory.h"
#include "ir/liveness.h"
#include "planner/simulator.h"

namespace memplan::planner {

Plan timing_plan(const ir::Graph& graph, const ir::NodeCosts& costs, std::vector<Step> schedule) {
  Plan plan;
  plan.device = costs.device;
  plan.node_seconds = costs.seconds;
  plan.tensor_bytes.reserve(graph.tensors().size());
  for (const ir::Tensor& t : graph.tensors()) plan.tensor_bytes.push_back(t.bytes);
  plan.schedule = std::move(schedule);
  for (ir::TensorId t = 0; t < graph.tensors().size(); ++t)
    if (graph.tensor(t).starts_on_host) plan.initial_host.push_back(t);
  return plan;
}

Plan assemble_plan(const ir::Graph& graph, const ir::NodeCosts& costs, PlanHeader header,
                   std::vector<Step> schedule, std::vector<Decision> decisions) {
  Plan plan = timing_plan(graph, costs, std::move(schedule));
  plan.model_path = std::move(header.model_path);
  plan.model_sha256 = std::move(header.model_sha256);
  plan.dims = graph.dims;
  plan.budget_bytes = header.budget_bytes;
  plan.solver = std::move(header.solver);
  plan.decisions = std::move(decisions);
  plan.decisions.resize(graph.tensors().size(), Decision::kKeep);
  fill_predicted(graph, plan);
  return plan;
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

}  // namespace memplan::planner
