#pragma once
// Replays a schedule under the timing rules of PLAN_FORMAT.md, exactly:
// three in-order streams (compute: compute/recompute/free; d2h: swap_out;
// h2d: swap_in) and the dependencies listed there.
#include <array>
#include <cstdint>
#include <vector>

#include "ir/graph.h"
#include "planner/plan.h"

namespace memplan::planner {

enum class Stream : std::uint8_t { kCompute = 0, kD2H = 1, kH2D = 2 };

struct StepTiming {
  Stream stream = Stream::kCompute;
  double start = 0;
  double end = 0;
  std::uint64_t bytes_in_use_after = 0;  // device memory after the step
};

struct SimResult {
  std::vector<StepTiming> steps;  // one per schedule step
  double iteration_seconds = 0;   // latest end of any step
  double compute_seconds = 0;     // sum of compute and recompute durations
  // Time each stream sat waiting on a dependency (start minus the end of
  // the previous step on the same stream), summed.
  std::array<double, 3> stall_seconds{};
  std::uint64_t peak_bytes = 0;  // over the initial state and every step
};

// Uses plan.node_seconds, plan.tensor_bytes and plan.device's bandwidths.
// Assumes a valid schedule (see plan_validator.h).
SimResult simulate(const ir::Graph& graph, const Plan& plan);

}  // namespace memplan::planner
