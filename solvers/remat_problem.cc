#include "solvers/remat_problem.h"

#include <algorithm>
#include <string>

#include "ir/in_place_writes.h"
#include "ir/memory_tracker.h"
#include "util/errors.h"

namespace memplan::solvers {

double RematProblem::compute_seconds() const {
  double s = 0;
  for (const RematNode& n : nodes) s += n.seconds;
  return s;
}

RematProblem remat_problem(const ir::Graph& graph, const ir::NodeCosts& costs,
                           std::uint64_t budget_bytes) {
  RematProblem p;
  p.budget_bytes = budget_bytes;
  for (const ir::Tensor& t : graph.tensors())
    if (t.producer == ir::kNoNode) p.base_bytes += t.bytes;
  const auto& nodes = graph.nodes();
  std::vector<char> written(graph.tensors().size(), 0);
  for (const ir::Node& n : nodes)
    for (ir::TensorId t : ir::in_place_writes(n)) written[t] = 1;
  p.nodes.resize(nodes.size());
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    RematNode& r = p.nodes[i];
    r.seconds = i < costs.seconds.size() ? costs.seconds[i] : 0.0;
    r.recomputable = !nodes[i].is_random() && ir::in_place_writes(nodes[i]).empty();
    for (ir::TensorId t : nodes[i].outputs) {
      r.bytes += graph.tensor(t).bytes;
      r.output = r.output || graph.tensor(t).is_graph_output;
    }
    for (ir::TensorId t : nodes[i].inputs) {
      if (written[t]) r.recomputable = false;
      const ir::NodeId from = graph.tensor(t).producer;
      if (from == ir::kNoNode) continue;
      if (from >= i)
        throw InputError("node '" + nodes[i].name + "' reads '" + graph.tensor(t).name +
                         "', made later: the node order is not topological");
      r.inputs.push_back(from);
    }
    std::sort(r.inputs.begin(), r.inputs.end());
    r.inputs.erase(std::unique(r.inputs.begin(), r.inputs.end()), r.inputs.end());
  }
  return p;
}

namespace {

constexpr std::size_t kNever = static_cast<std::size_t>(-1);

}  // namespace

std::vector<std::vector<std::size_t>> eager_frees(const RematProblem& problem,
                                                  std::span<const std::size_t> runs) {
  const std::size_t n = problem.nodes.size();
  std::vector<std::size_t> next_read(n, kNever), next_make(n, kNever);
  std::vector<std::vector<std::size_t>> free_after(runs.size());
  // A value read next after p is needed; one made again first (or neither)
  // is not. kNever compares as "later than anything".
  auto dead = [&](std::size_t v) {
    return !problem.nodes[v].output && (next_read[v] == kNever || next_make[v] < next_read[v]);
  };
  for (std::size_t p = runs.size(); p-- > 0;) {
    const std::size_t v = runs[p];
    for (std::size_t u : problem.nodes[v].inputs)
      if (dead(u)) free_after[p].push_back(u);
    if (dead(v)) free_after[p].push_back(v);
    for (std::size_t u : problem.nodes[v].inputs) next_read[u] = p;
    next_make[v] = p;
  }
  return free_after;
}

RematReplay replay(const RematProblem& problem, std::span<const std::size_t> runs) {
  const std::size_t n = problem.nodes.size();
  RematReplay out;
  for (std::size_t v : runs)
    if (v >= n) {
      out.error = "run of node " + std::to_string(v) + ", of " + std::to_string(n);
      return out;
    }
  const auto free_after = eager_frees(problem, runs);
  std::vector<std::uint64_t> bytes;
  bytes.reserve(n);
  for (const RematNode& node : problem.nodes) bytes.push_back(node.bytes);
  ir::MemoryTracker memory(std::move(bytes));  // over base_bytes, always resident
  std::vector<char> ran(n, 0);
  for (std::size_t p = 0; p < runs.size(); ++p) {
    const std::size_t v = runs[p];
    const RematNode& node = problem.nodes[v];
    if (ran[v] && !node.recomputable) {
      out.error = "run " + std::to_string(p) + " runs node " + std::to_string(v) +
                  " again, which is not recomputable";
      return out;
    }
    for (std::size_t u : node.inputs)
      if (!memory.resident(u)) {
        out.error = "run " + std::to_string(p) + " (node " + std::to_string(v) + ") reads node " +
                    std::to_string(u) + ", not resident";
        return out;
      }
    memory.allocate(v);
    ran[v] = 1;
    out.seconds += node.seconds;
    for (std::size_t u : free_after[p]) memory.release(u);
  }
  out.peak_bytes = problem.base_bytes + memory.peak_bytes();
  for (std::size_t v = 0; v < n; ++v)
    if (!ran[v]) {
      out.error = "node " + std::to_string(v) + " never runs";
      return out;
    }
  if (out.peak_bytes > problem.budget_bytes)
    out.error = "peak " + std::to_string(out.peak_bytes) + " B over the budget of " +
                std::to_string(problem.budget_bytes) + " B";
  return out;
}

}  // namespace memplan::solvers
