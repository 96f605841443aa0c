#pragma once
// Seeded random knapsack problems shaped like training graphs: a memory
// hill that rises through the forward and falls through the backward, and
// activations whose windows span the middle.
#include <algorithm>
#include <random>
#include <vector>

#include "solvers/problem.h"

namespace memplan::test {

inline solvers::Problem random_problem(unsigned seed, int candidates, int steps,
                                       double budget_fraction) {
  std::mt19937 rng(seed);
  solvers::Problem p;
  p.step_bytes.assign(steps, 1000);
  p.step_seconds.assign(steps, 1e-3);
  const int mid = steps / 2;
  std::uniform_int_distribution<int> made(0, mid - 2), back(mid + 1, steps - 1);
  std::uniform_int_distribution<std::uint64_t> size(100, 5000);
  std::uniform_real_distribution<double> secs(1e-4, 5e-3);
  for (int i = 0; i < candidates; ++i) {
    solvers::Candidate c;
    c.tensor = static_cast<std::uint32_t>(i);
    c.name = "t" + std::to_string(i);
    c.bytes = size(rng);
    c.made = made(rng);
    c.last_forward_use = c.made + 1;
    c.first_backward_use = back(rng);
    c.recompute_gap = {c.last_forward_use + 1, c.first_backward_use - 1};
    c.swap_gap = {c.last_forward_use + 2, c.first_backward_use - 3};
    c.swap_out_seconds = c.swap_in_seconds = static_cast<double>(c.bytes) * 2e-7;
    c.swap_exposed_seconds = (rng() % 3 == 0) ? secs(rng) * 0.2 : 0.0;
    c.recompute_seconds = secs(rng);
    c.can_swap = !c.swap_gap.empty() && rng() % 5 != 0;
    c.can_recompute = rng() % 4 != 0;
    // The tensor occupies memory from made to first backward use.
    for (int s = static_cast<int>(c.made); s <= c.first_backward_use; ++s)
      p.step_bytes[s] += c.bytes;
    p.candidates.push_back(c);
  }
  // Chain holds: a third of the candidates read another whose own reader
  // comes later, which a recompute of theirs brings back early.
  for (int i = 0; i < candidates; ++i) {
    const auto j = static_cast<std::size_t>(rng() % static_cast<unsigned>(candidates));
    const solvers::Candidate& reader = p.candidates[static_cast<std::size_t>(i)];
    const solvers::Candidate& input = p.candidates[j];
    if (rng() % 3 != 0 || j == static_cast<std::size_t>(i) ||
        input.first_backward_use <= reader.first_backward_use)
      continue;
    p.holds.push_back({static_cast<std::size_t>(i),
                       j,
                       {reader.first_backward_use, input.first_backward_use - 1},
                       input.bytes,
                       j});
  }
  std::sort(p.holds.begin(), p.holds.end(), [](const auto& x, const auto& y) {
    return x.source != y.source ? x.source < y.source : x.held.begin < y.held.begin;
  });
  // Shared chain steps: a few forward nodes two or three recomputable
  // candidates' chains run, each within what is left of every reader's
  // recompute time (a chain's steps are distinct nodes).
  std::vector<double> unshared(p.candidates.size());
  for (std::size_t i = 0; i < unshared.size(); ++i) unshared[i] = p.candidates[i].recompute_seconds;
  for (int k = 0; k < candidates / 4; ++k) {
    solvers::SharedChainStep step;
    double cheapest = 1.0;
    for (int r = 0, want = 2 + static_cast<int>(rng() % 2); r < want; ++r) {
      const auto i = static_cast<std::size_t>(rng() % static_cast<unsigned>(candidates));
      if (!p.candidates[i].can_recompute ||
          std::find(step.readers.begin(), step.readers.end(), i) != step.readers.end())
        continue;
      step.readers.push_back(i);
      cheapest = std::min(cheapest, unshared[i]);
    }
    if (step.readers.size() < 2) continue;
    step.seconds = cheapest * 0.5;
    for (std::size_t i : step.readers) unshared[i] -= step.seconds;
    p.shared_steps.push_back(std::move(step));
  }
  for (int s = 0; s < steps; ++s) {
    p.forward_seconds += s < mid ? 1e-3 : 0;
    p.backward_seconds += s >= mid ? 1e-3 : 0;
  }
  p.baseline_seconds = steps * 1e-3;
  std::uint64_t peak = p.baseline_peak();
  p.budget_bytes = static_cast<std::uint64_t>(budget_fraction * static_cast<double>(peak));
  return p;
}

}  // namespace memplan::test
