#pragma once
// The exact optimum of a small RematProblem by enumeration: Dijkstra over
// states (nodes run at least once, values resident), a run costing its
// node's seconds and a free costing nothing. With `first_runs_in_order`
// the first runs follow the node order, as in Checkmate's stages; without,
// any order the inputs allow. A node that is not recomputable runs once.
// Up to 12 nodes (3^n states at most).
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <queue>
#include <unordered_map>
#include <utility>
#include <vector>

#include "solvers/remat_problem.h"

namespace memplan::solvers::test_util {

inline std::optional<double> brute_force_optimum(const RematProblem& p, bool first_runs_in_order) {
  const std::size_t n = p.nodes.size();
  const std::uint32_t all = (1u << n) - 1;
  std::uint32_t outputs = 0;
  std::vector<std::uint32_t> needs(n, 0);
  for (std::size_t v = 0; v < n; ++v) {
    if (p.nodes[v].output) outputs |= 1u << v;
    for (std::size_t u : p.nodes[v].inputs) needs[v] |= 1u << u;
  }
  auto bytes = [&](std::uint32_t resident) {
    std::uint64_t b = p.base_bytes;
    for (std::size_t v = 0; v < n; ++v)
      if (resident >> v & 1u) b += p.nodes[v].bytes;
    return b;
  };
  using State = std::uint64_t;  // done | resident << 32
  std::unordered_map<State, double> dist;
  using Item = std::pair<double, State>;
  std::priority_queue<Item, std::vector<Item>, std::greater<>> queue;
  auto push = [&](State s, double d) {
    auto it = dist.find(s);
    if (it != dist.end() && it->second <= d) return;
    dist[s] = d;
    queue.emplace(d, s);
  };
  push(0, 0.0);
  while (!queue.empty()) {
    const auto [d, s] = queue.top();
    queue.pop();
    if (dist[s] < d) continue;
    const auto done = static_cast<std::uint32_t>(s), resident = static_cast<std::uint32_t>(s >> 32);
    if (done == all) return d;
    const std::uint64_t in_use = bytes(resident);
    for (std::size_t v = 0; v < n; ++v) {
      const std::uint32_t bit = 1u << v;
      if (resident & bit) {
        if (!(outputs & bit)) push(done | State{resident & ~bit} << 32, d);
        continue;
      }
      // In order: v has run before, or is the first not yet run.
      const bool may_run = !first_runs_in_order || (done & bit) || ((done + 1) & ~done) == bit;
      if (!may_run || (needs[v] & ~resident) != 0) continue;
      if ((done & bit) && !p.nodes[v].recomputable) continue;
      if (in_use + p.nodes[v].bytes > p.budget_bytes) continue;
      push((done | bit) | State{resident | bit} << 32, d + p.nodes[v].seconds);
    }
  }
  return std::nullopt;
}

}  // namespace memplan::solvers::test_util
