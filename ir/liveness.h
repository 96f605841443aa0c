#pragma once
#include <cstdint>
#include <vector>

#include "ir/graph.h"

namespace memplan::ir {

// When each tensor lives in the baseline schedule (the graph's node order):
// made at its producer's step, dead after its last reader's step. Graph
// inputs, initializers and graph outputs are pinned: resident from their
// first step to the end.
class Liveness {
 public:
  explicit Liveness(const Graph& graph);

  // Step (node index) that makes the tensor; -1 for one resident at start.
  std::int64_t def_step(TensorId t) const { return def_[t]; }
  // Last step that reads it; its def step when nothing does.
  std::int64_t last_use_step(TensorId t) const { return last_use_[t]; }
  // Freed after this step; kNever for pinned tensors.
  std::int64_t free_step(TensorId t) const { return free_[t]; }
  bool pinned(TensorId t) const { return free_[t] == kNever; }
  // Tensors freed right after step s, ascending.
  const std::vector<TensorId>& freed_after(std::int64_t s) const { return freed_after_[s]; }

  static constexpr std::int64_t kNever = INT64_MAX;

 private:
  std::vector<std::int64_t> def_, last_use_, free_;
  std::vector<std::vector<TensorId>> freed_after_;
};

}  // namespace memplan::ir
