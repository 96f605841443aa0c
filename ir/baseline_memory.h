#pragma once
#include <array>
#include <cstdint>
#include <vector>

#include "ir/graph.h"
#include "ir/liveness.h"

namespace memplan::ir {

// The baseline of PLAN_FORMAT.md: node order, every tensor kept, each tensor
// a node makes freed right after its last reader, graph inputs, initializers
// and outputs resident throughout.
struct BaselineMemory {
  std::uint64_t initial_bytes = 0;           // inputs and initializers
  std::vector<std::uint64_t> after_compute;  // in use right after node i runs
  std::vector<std::uint64_t> after_frees;    // and after its frees
  std::uint64_t peak_bytes = 0;
  std::int64_t peak_step = -1;  // node index of the peak; -1: the initial state
  // Bytes resident at the peak, by TensorClass.
  std::array<std::uint64_t, kTensorClassCount> peak_by_class{};
};

BaselineMemory baseline_memory(const Graph& graph, const Liveness& liveness);

}  // namespace memplan::ir
