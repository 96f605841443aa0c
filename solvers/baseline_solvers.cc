#include "solvers/baseline_solvers.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>

#include "solvers/model_eval.h"

namespace memplan::solvers {
namespace {

using Clock = std::chrono::steady_clock;

Solution finish(const Problem& p, std::vector<Decision> choice, Clock::time_point start) {
  Solution s;
  s.choice = std::move(choice);
  ModelEval e = evaluate(p, s.choice);
  s.objective_seconds = e.overhead_seconds;
  s.status = e.fits ? SolveStatus::kHeuristic : SolveStatus::kInfeasible;
  s.solve_seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return s;
}

std::vector<std::size_t> forward_order(const Problem& p) {
  std::vector<std::size_t> order(p.candidates.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](auto a, auto b) { return p.candidates[a].made < p.candidates[b].made; });
  return order;
}

}  // namespace

Solution ChenSqrtSolver::solve(const Problem& p, const SolverOptions&) const {
  auto start = Clock::now();
  std::vector<Decision> choice(p.candidates.size(), Decision::kKeep);
  auto order = forward_order(p);
  const auto stride =
      static_cast<std::size_t>(std::ceil(std::sqrt(static_cast<double>(order.size()))));
  for (std::size_t k = 0; k < order.size(); ++k) {
    bool checkpoint = stride == 0 || k % stride == 0;
    if (!checkpoint && p.candidates[order[k]].can_recompute)
      choice[order[k]] = Decision::kRecompute;
  }
  return finish(p, std::move(choice), start);
}

Solution VdnnSolver::solve(const Problem& p, const SolverOptions&) const {
  auto start = Clock::now();
  std::vector<Decision> choice(p.candidates.size(), Decision::kKeep);
  // vDNN offloads activations (layer inputs); weights stay.
  for (std::size_t i = 0; i < choice.size(); ++i)
    if (p.candidates[i].can_swap && !p.candidates[i].state) choice[i] = Decision::kSwap;
  Solution s = finish(p, std::move(choice), start);
  s.prefetch_window = 1;  // the next node's reload during this node
  return s;
}

Solution AtpSolver::solve(const Problem& p, const SolverOptions&) const {
  auto start = Clock::now();
  const std::size_t n = p.candidates.size();
  std::vector<Decision> pick(n, Decision::kKeep);
  std::vector<double> efficiency(n, 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    const Candidate& c = p.candidates[i];
    if (c.state) continue;  // ATP ranks activations
    const double b = static_cast<double>(c.bytes);
    double swap_eff = c.can_swap ? b / std::max(1e-12, c.swap_out_seconds + c.swap_in_seconds) : 0;
    double rec_eff = c.can_recompute ? b / std::max(1e-12, c.recompute_seconds) : 0;
    if (swap_eff == 0 && rec_eff == 0) continue;
    pick[i] = swap_eff > rec_eff ? Decision::kSwap : Decision::kRecompute;
    efficiency[i] = std::max(swap_eff, rec_eff);
  }
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](auto a, auto b) { return efficiency[a] > efficiency[b]; });
  const std::uint64_t peak = p.baseline_peak();
  const std::uint64_t excess = peak > p.budget_bytes ? peak - p.budget_bytes : 0;
  std::vector<Decision> choice(n, Decision::kKeep);
  std::uint64_t covered = 0;
  for (std::size_t i : order) {
    if (covered >= excess || pick[i] == Decision::kKeep) break;
    choice[i] = pick[i];
    covered += p.candidates[i].bytes;
  }
  return finish(p, std::move(choice), start);
}

Solution RestrictedSolver::solve(const Problem& p, const SolverOptions& options) const {
  Problem q = p;
  SolverOptions o = options;
  restrict_evictions(q, evictions_, &o.warm_start);
  return inner_->solve(q, o);
}

}  // namespace memplan::solvers
