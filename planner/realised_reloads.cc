#include "planner/realised_reloads.h"

#include <algorithm>

namespace memplan::planner {

std::vector<std::uint32_t> realised_reloads(const ir::Graph& graph, const solvers::Problem& problem,
                                            const ScheduleResult& schedule) {
  std::vector<std::uint32_t> remade(graph.nodes().size(), 0);
  for (const Step& s : schedule.schedule)
    if (s.op == StepOp::kRecompute && s.id < remade.size()) ++remade[s.id];
  std::vector<std::uint32_t> counts(problem.candidates.size(), 1);
  // A node's runs count once, on its first recomputed output that is a
  // candidate: its other outputs come from the same runs.
  std::vector<char> counted(graph.nodes().size(), 0);
  for (std::size_t i = 0; i < counts.size(); ++i) {
    const ir::TensorId t = problem.candidates[i].tensor;
    if (t >= schedule.applied.size() || schedule.applied[t] != Decision::kRecompute) continue;
    const ir::NodeId producer = graph.tensor(t).producer;
    if (producer == ir::kNoNode || counted[producer]) continue;
    counted[producer] = 1;
    counts[i] = std::max<std::uint32_t>(1, remade[producer]);
  }
  return counts;
}

solvers::Problem priced_with_reloads(const solvers::Problem& problem,
                                     std::span<const std::uint32_t> reloads) {
  solvers::Problem priced = problem;
  for (std::size_t i = 0; i < priced.candidates.size() && i < reloads.size(); ++i) {
    solvers::Candidate& c = priced.candidates[i];
    const auto made = static_cast<std::size_t>(c.made);
    if (reloads[i] <= 1 || c.made < 0 || made >= priced.step_seconds.size()) continue;
    // The producer's own runs: the chain it reruns counts on the chain's
    // own candidates (a rerun chain splits its evicted inputs too).
    c.recompute_seconds += static_cast<double>(reloads[i] - 1) * priced.step_seconds[made];
  }
  return priced;
}

}  // namespace memplan::planner
