#include "ir/baseline_memory.h"

#include "ir/memory_tracker.h"

namespace memplan::ir {

BaselineMemory baseline_memory(const Graph& graph, const Liveness& liveness) {
  BaselineMemory m;
  const auto& tensors = graph.tensors();
  const auto& nodes = graph.nodes();
  MemoryTracker memory = MemoryTracker::at_start(graph);
  m.initial_bytes = memory.bytes_in_use();
  m.after_compute.resize(nodes.size());
  m.after_frees.resize(nodes.size());
  m.peak_bytes = m.initial_bytes;
  for (NodeId i = 0; i < nodes.size(); ++i) {
    for (TensorId out : nodes[i].outputs) memory.allocate(out);
    m.after_compute[i] = memory.bytes_in_use();
    if (m.after_compute[i] > m.peak_bytes) {
      m.peak_bytes = m.after_compute[i];
      m.peak_step = i;
    }
    for (TensorId t : liveness.freed_after(i)) memory.release(t);
    m.after_frees[i] = memory.bytes_in_use();
  }
  // Breakdown at the peak: what is resident right after the peak step.
  for (TensorId t = 0; t < tensors.size(); ++t) {
    bool resident = m.peak_step < 0 ? tensors[t].initially_resident()
                                    : liveness.def_step(t) <= m.peak_step &&
                                          liveness.free_step(t) >= m.peak_step;
    if (resident) m.peak_by_class[static_cast<int>(tensors[t].cls)] += tensors[t].bytes;
  }
  return m;
}

}  // namespace memplan::ir
