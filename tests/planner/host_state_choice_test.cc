// kAuto's choice between the plans without and with the training state on
// the host: which wins and why, and what copying the state once costs.
#include "planner/host_state_choice.h"

#include <gtest/gtest.h>

#include "host_state_plan.h"
#include "ir/device_presets.h"
#include "ir/node_costs.h"
#include "solvers/problem_builder.h"

namespace memplan::planner {
namespace {

PlanOutcome outcome(bool fits, std::uint64_t peak, double iteration) {
  PlanOutcome o;
  o.fits = fits;
  o.plan.predicted.peak_bytes = peak;
  o.plan.predicted.iteration_seconds = iteration;
  o.plan.predicted.baseline_iteration_seconds = 1.0;
  return o;
}

TEST(HostStateChoice, AFitBeatsNoFitAndTheFasterFitWins) {
  // Without it no fit: a fit wins, else only a lower peak.
  EXPECT_EQ(host_state_wins(outcome(false, 100, 1.0), outcome(true, 90, 9.0)), "did not fit");
  EXPECT_EQ(host_state_wins(outcome(false, 100, 1.0), outcome(false, 99, 9.0)),
            "reached a higher peak");
  EXPECT_EQ(host_state_wins(outcome(false, 100, 1.0), outcome(false, 100, 1.0)), "");
  // Both fit: the faster, by simulated time (bert_large a100-40gb 20 %:
  // +749.7 % without, +34.3 % with).
  EXPECT_EQ(
      host_state_wins(outcome(true, 90, 8.497), outcome(true, 80, 1.343)).rfind("simulated", 0),
      0u);
  EXPECT_EQ(host_state_wins(outcome(true, 90, 1.2), outcome(true, 80, 1.3)), "");
  EXPECT_EQ(host_state_wins(outcome(true, 90, 1.2), outcome(false, 80, 1.0)), "");
}

TEST(HostStateChoice, CopyingTheStateOnceCostsItsBytesOverBothLinks) {
  const ir::Graph g = test_util::host_state_graph();
  std::vector<std::string> warnings;
  PlanningGraph pg = planning_graph(
      g, ir::make_node_costs(g, ir::device_preset("a100-40gb"), {}, "roofline", warnings));
  double bytes = 0;
  for (ir::TensorId t : solvers::host_state_tensors(pg.graph, solvers::ProblemOptions{}))
    bytes += static_cast<double>(g.tensor(t).bytes);
  ASSERT_GT(bytes, 0);
  const auto& d = pg.costs.device;
  EXPECT_DOUBLE_EQ(host_state_copy_seconds(pg),
                   bytes / d.h2d_bytes_per_s + bytes / d.d2h_bytes_per_s);
  pg.costs.device.h2d_bytes_per_s = 0;  // unknown: no estimate, never a reason to search
  EXPECT_EQ(host_state_copy_seconds(pg), 0);
}

}  // namespace
}  // namespace memplan::planner
