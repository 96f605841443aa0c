#pragma once
// DTR-style baseline (Kirisame et al., Dynamic Tensor Rematerialization):
// run the graph in order and, whenever device memory would exceed the
// budget, evict the resident tensor with the lowest
// cost / (size x staleness); a later reader recomputes what was evicted
// (recursively). The result is a schedule like any other.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ir/costs.h"
#include "ir/graph.h"
#include "planner/plan.h"

namespace memplan::planner {

struct DtrResult {
  std::vector<Step> schedule;
  // By TensorId: recompute for every tensor a recompute step made resident
  // again (evicted, or freed after its last reader and then needed by a
  // recompute chain); keep otherwise.
  std::vector<Decision> decisions;
  double solve_seconds = 0;
  bool fits = false;  // peak_bytes <= budget_bytes
  // The largest device memory in use over the initial state and every step,
  // as PLAN_FORMAT counts it, so callers need not replay the schedule.
  std::uint64_t peak_bytes = 0;
  std::size_t evictions = 0;     // free steps chosen by the heuristic
  std::size_t recomputes = 0;    // recompute steps
  double recompute_seconds = 0;  // node time of those recompute steps
  // DTR thrashes where the budget is tight: chains evict, or free as dead,
  // each other's inputs and remake them over and over (shufflenet_tiny at
  // 50 %: 414 million recomputes, past 24 GiB of schedule). After
  // kMaxRecomputesPerNode recomputes per graph node it gives up: it evicts
  // and frees early no more, and the rest of the run keeps what it makes.
  bool gave_up = false;
  static constexpr std::size_t kMaxRecomputesPerNode = 20;
};

DtrResult dtr_schedule(const ir::Graph& graph, const ir::NodeCosts& costs,
                       std::uint64_t budget_bytes);

// What the plan's note says of a run that gave up; empty otherwise.
std::string dtr_note(const DtrResult& result);

}  // namespace memplan::planner
