#include "ir/liveness.h"

namespace memplan::ir {

Liveness::Liveness(const Graph& graph)
    : def_(graph.tensors().size(), -1),
      last_use_(graph.tensors().size(), -1),
      free_(graph.tensors().size(), kNever),
      freed_after_(graph.nodes().size()) {
  const auto& tensors = graph.tensors();
  for (TensorId t = 0; t < tensors.size(); ++t) {
    const Tensor& x = tensors[t];
    def_[t] = x.producer == kNoNode ? -1 : static_cast<std::int64_t>(x.producer);
    last_use_[t] = x.consumers.empty() ? def_[t] : static_cast<std::int64_t>(x.consumers.back());
    // A tensor with neither producer nor resident-at-start flag cannot
    // occur in a loaded graph; treat it as pinned to stay conservative.
    bool made = x.producer != kNoNode;
    if (made && !x.is_graph_output) {
      free_[t] = last_use_[t];
      freed_after_[free_[t]].push_back(t);
    }
  }
}

}  // namespace memplan::ir
