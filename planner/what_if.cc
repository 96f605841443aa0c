#include "planner/what_if.h"

#include <utility>

#include "planner/plan_assembly.h"
#include "planner/plan_search.h"
#include "planner/plan_validator.h"
#include "util/errors.h"
#include "util/units.h"

namespace memplan::planner {

std::string first_over_budget(const ir::Graph& graph, const Plan& plan, const SimResult& sim,
                              std::uint64_t budget_bytes) {
  for (std::size_t i = 0; i < sim.steps.size(); ++i) {
    if (sim.steps[i].bytes_in_use_after <= budget_bytes) continue;
    const Step& s = plan.schedule[i];
    std::string what = s.on_node() ? graph.node(s.id).name : graph.tensor(s.id).name;
    return "peak " + util::human_bytes(sim.peak_bytes) + " is over the budget " +
           util::human_bytes(budget_bytes) + " by " +
           util::human_bytes(sim.peak_bytes - budget_bytes) + "; first over at step " +
           std::to_string(i) + " (" + std::string(to_string(s.op)) + " '" + what + "')";
  }
  return "the resident graph inputs and initializers alone are over the budget " +
         util::human_bytes(budget_bytes);
}

WhatIf what_if_decisions(const ir::Graph& graph, const ir::NodeCosts& costs,
                         const std::vector<Decision>& requested, std::uint64_t budget_bytes,
                         const WhatIfModel& model) {
  ScheduledDecisions sched = schedule_decisions(graph, costs, requested, budget_bytes);
  WhatIf w;
  Plan& p = w.plan;
  p = std::move(sched.plan);
  p.model_path = model.path;
  p.model_sha256 = model.sha256;
  for (ir::TensorId t = 0; t < graph.tensors().size(); ++t)
    if (requested[t] != Decision::kKeep && p.decisions[t] == Decision::kKeep)
      w.fell_back.push_back(graph.tensor(t).name);

  // The simulator trusts its schedule; check the scheduler's against every
  // rule but the budget, which is reported below instead. (Its predicted
  // figures are those schedule_decisions filled in: the budget moves none.)
  Plan unlimited = p;
  unlimited.budget_bytes = UINT64_MAX;
  if (Validation v = validate(graph, unlimited); !v.valid)
    throw InvalidPlanError("the scheduler made an invalid schedule for " + model.source + ": " +
                           v.message);
  w.sim = simulate(graph, p);
  w.fits = sched.fits && w.sim.peak_bytes <= budget_bytes;
  if (!w.fits)
    w.diagnosis = sched.diagnosis.empty() ? first_over_budget(graph, p, w.sim, budget_bytes)
                                          : sched.diagnosis;
  return w;
}

WhatIf what_if_plan(const ir::Graph& graph, Plan plan, std::optional<std::uint64_t> budget_bytes,
                    const std::string& source) {
  WhatIf w;
  w.plan = std::move(plan);
  // A what-if may edit a plan's schedule by hand, so its predicted numbers
  // and budget are not held against it; every schedule rule still is.
  Plan check = w.plan;
  check.budget_bytes = UINT64_MAX;
  // An edited schedule makes other allocations than the layout describes.
  check.memory_layout.reset();
  fill_predicted(graph, check);
  if (Validation v = validate(graph, check); !v.valid)
    throw InvalidPlanError(source + ": invalid: " + v.message);
  if (budget_bytes) w.plan.budget_bytes = *budget_bytes;
  w.sim = simulate(graph, w.plan);
  w.fits = w.sim.peak_bytes <= w.plan.budget_bytes;
  if (!w.fits) w.diagnosis = first_over_budget(graph, w.plan, w.sim, w.plan.budget_bytes);
  return w;
}

}  // namespace memplan::planner
