#include "planner/host_state_choice.h"

#include "solvers/problem_builder.h"

namespace memplan::planner {
namespace {

double overhead_seconds(const PlanOutcome& o) {
  return o.plan.predicted.iteration_seconds - o.plan.predicted.baseline_iteration_seconds;
}

}  // namespace

double host_state_copy_seconds(const PlanningGraph& pg) {
  const ir::DeviceSpec& d = pg.costs.device;
  if (d.h2d_bytes_per_s <= 0 || d.d2h_bytes_per_s <= 0) return 0;
  double bytes = 0;
  for (ir::TensorId t : solvers::host_state_tensors(pg.graph, solvers::ProblemOptions{}))
    bytes += static_cast<double>(pg.graph.tensor(t).bytes);
  return bytes / d.h2d_bytes_per_s + bytes / d.d2h_bytes_per_s;
}

bool host_state_worth_searching(const PlanOutcome& without, const PlanningGraph& pg) {
  return !without.fits || overhead_seconds(without) > host_state_copy_seconds(pg);
}

std::string host_state_wins(const PlanOutcome& without, const PlanOutcome& on_host) {
  if (!without.fits) {
    if (on_host.fits) return "did not fit";
    return on_host.plan.predicted.peak_bytes < without.plan.predicted.peak_bytes
               ? "reached a higher peak"
               : "";
  }
  if (!on_host.fits || overhead_seconds(on_host) >= overhead_seconds(without)) return "";
  return "simulated " +
         std::to_string((overhead_seconds(without) - overhead_seconds(on_host)) * 1e3) +
         " ms slower";
}

}  // namespace memplan::planner
