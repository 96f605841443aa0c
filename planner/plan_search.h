#pragma once
// From a budget to a valid plan: build the knapsack, run a solver, turn its
// decisions into a schedule, simulate, and tighten the model's budget when
// the real schedule still does not fit (the model is an estimate).
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/costs.h"
#include "ir/graph.h"
#include "planner/plan.h"
#include "planner/planning_order.h"
#include "planner/scheduler.h"
#include "solvers/evictions.h"
#include "solvers/solver.h"

namespace memplan::planner {

struct PlanRequest {
  std::uint64_t budget_bytes = 0;
  std::string solver = "auto";  // auto, greedy, ilp, a baseline, or dtr
  solvers::Evictions evictions;
  // Training state (parameters, accumulation buffers, optimizer state) may
  // be swapped between its forward and backward reads
  // (solvers::ProblemOptions::offload_state).
  bool offload_state = true;
  // Training state kept on the host between iterations (PLAN_FORMAT's
  // `initial_host`): each tensor is copied in for its first read and, once
  // read and (where written in place) copied out, leaves the device until
  // the next iteration. kAuto plans so only where the plan without it does
  // not fit (it moves every such tensor over the link each iteration).
  // Needs offload_state; never for dtr.
  enum class StateOnHost { kNever, kAuto, kAlways };
  StateOnHost state_on_host = StateOnHost::kAuto;
  double time_limit_seconds = 60;  // the ILP's, per solve
  // Where set, the ILP solves stop here: each gets at most what is left,
  // and none starts after it (the tightening rounds, auto's and ilp's
  // second opinions). The heuristic's work is not cut short, so a search
  // past its deadline still hands out the heuristic's plan.
  std::optional<std::chrono::steady_clock::time_point> deadline;
  int threads = 1;
  bool progress = false;
  volatile bool* interrupted = nullptr;
  // Where set, every solve adds its solve_seconds here: all rounds, problem
  // variants and second opinions, layout replans included (--timings).
  double* solve_seconds_sum = nullptr;
  std::string model_path;
  std::string model_sha256;
  int max_rounds = 10;  // model-budget tightening rounds
  // The heuristic also runs the swap-only and recompute-only pipelines and
  // keeps the fastest plan. Off for the layout's floor plan, which must be
  // the one whose arena reaches lowest, not the fastest.
  bool one_way_plans = true;
};

struct PlanOutcome {
  Plan plan;                // always valid under PLAN_FORMAT.md (validated)
  bool fits = false;        // plan.predicted.peak_bytes <= budget
  std::string solver_used;  // for auto: which one won
  std::size_t rounds = 0;
  std::string note;  // solver notes, why it does not fit
  // The search ran past PlanRequest::deadline with an ILP among its
  // solvers: ILP solves were cut short or skipped.
  bool ilp_cut_short = false;
};

PlanOutcome search_plan(const ir::Graph& graph, const ir::NodeCosts& costs,
                        const PlanRequest& request);
// The same on `order` = planning_graph(graph, costs): callers that search
// one graph more than once (the layout's replans) make the order once
// (synth100k: 0.45 s a search).
PlanOutcome search_plan(const ir::Graph& graph, const ir::NodeCosts& costs,
                        const PlanningGraph& order, const PlanRequest& request);

// Whether `request` may keep training state on the host between iterations
// (PlanRequest::state_on_host): memplan's own solvers only (auto, greedy,
// ilp), with swaps and state offload allowed; the papers' baselines plan
// as their papers do.
bool state_on_host_allowed(const PlanRequest& request);

// Given decisions by TensorId (the what-if of `memplan simulate`): the
// schedule made as `plan` makes it, in the planning order, restated for the
// graph as given. The plan has no model path or hash; its solver is
// "what-if" / heuristic; `fits` and `diagnosis` are the scheduler's.
struct ScheduledDecisions {
  Plan plan;
  bool fits = false;
  std::string diagnosis;
};
ScheduledDecisions schedule_decisions(const ir::Graph& graph, const ir::NodeCosts& costs,
                                      const std::vector<Decision>& decisions,
                                      std::uint64_t budget_bytes);

// Decisions by TensorId from a solver's choice per candidate.
std::vector<Decision> decisions_by_tensor(const ir::Graph& graph, const solvers::Problem& problem,
                                          const std::vector<Decision>& choice);

}  // namespace memplan::planner
