#pragma once
#include <cstdint>
#include <vector>

#include "ir/costs.h"
#include "ir/graph.h"
#include "solvers/evictions.h"
#include "solvers/problem.h"

namespace memplan::solvers {

// An initializer that is not a graph input is training state only from
// this size (ProblemOptions::offload_state).
inline constexpr std::uint64_t kMinInitializerStateBytes = 1 << 20;

struct ProblemOptions {
  Evictions evictions;
  // A recompute may re-run at most this many forward nodes in a chain.
  int max_recompute_chain = 8;
  // Whether a chain may remake a Dropout's output from its kept mask, as
  // the scheduler can (planner/reload_plan.cc). False leaves out the
  // recomputes whose chain would: a smaller choice, but the scheduler never
  // has to rebuild a Dropout's input side for another tensor.
  bool remake_dropouts_in_chains = true;
  // Tensors smaller than this are not worth a decision.
  std::uint64_t min_bytes = 1;
  // Whether training state (floating-point graph inputs and large
  // initializers that are not outputs: parameters, accumulation buffers,
  // optimizer state) is a candidate too, for a swap between its forward and
  // backward reads.
  bool offload_state = true;
};

// The training state a plan may keep on the host between iterations
// (ir::Tensor::starts_on_host, PLAN_FORMAT's `initial_host`): what
// ProblemOptions::offload_state makes a candidate, read by some node.
std::vector<ir::TensorId> host_state_tensors(const ir::Graph& graph, const ProblemOptions& options);

// Candidates are the activations (made by the forward, read by the
// backward) that can leave the device between those uses, and, with
// ProblemOptions::offload_state, the training state that can.
// Whether the two options give a different problem for `graph`: some
// forward Dropout has a kept mask, so a chain could remake it.
bool has_dropout_chains(const ir::Graph& graph);

Problem build_problem(const ir::Graph& graph, const ir::NodeCosts& costs,
                      std::uint64_t budget_bytes, const ProblemOptions& options);

}  // namespace memplan::solvers
