#pragma once
#include <cstdint>

#include "ir/costs.h"
#include "ir/graph.h"
#include "solvers/problem.h"

namespace memplan::solvers {

struct ProblemOptions {
  bool allow_swap = true;
  bool allow_recompute = true;
  // A recompute may re-run at most this many forward nodes in a chain.
  int max_recompute_chain = 8;
  // Tensors smaller than this are not worth a decision.
  std::uint64_t min_bytes = 1;
};

// Candidates are the activations (made by the forward, read by the
// backward) that can leave the device between those uses.
Problem build_problem(const ir::Graph& graph, const ir::NodeCosts& costs,
                      std::uint64_t budget_bytes, const ProblemOptions& options);

}  // namespace memplan::solvers
