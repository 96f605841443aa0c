#pragma once
#include "solvers/solver.h"

namespace memplan::solvers {

// The polynomial heuristic (docs/model.md §Greedy): per candidate the option
// with the better memory-time freed per second of overhead; candidates in
// that order while any step of their window is over budget; then local
// search (undo, option flip, exchange) while the model's overhead drops,
// drops and additions while the objective with the link replayed drops,
// and — when options.simulate is given — undo moves judged by the simulator.
// The first fill runs at up to P link prices (a second of copy costs that
// many seconds of overhead in the ranking) and keeps the lowest objective.
// O(P C log C + (P + K + R + 2) C log S) for C candidates, S steps, K exchange
// rounds, R replayed moves (each also a replay of the link).
class GreedySolver final : public Solver {
 public:
  // Larger problems get the main run only: the other runs are second
  // opinions, each as dear as it (the planner's Dropout second problem too).
  static constexpr std::size_t kAlternativesMaxCandidates = 10000;
  // Past kAlternativesMaxCandidates, the exchange stops after this many
  // rounds in a row that found nothing (synth100k: 59 of its 64 rounds
  // found nothing, the last success in round 4, at a fifth of the plan's time).
  static constexpr int kLargeExchangePatience = 8;

  struct Config {
    int exchange_rounds = 32;     // K
    int simulate_calls = 40;      // budget of simulator-judged moves
    int replayed_exchanges = 64;  // replay-judged drops (and half as many additions)
    // Try link prices in the first fill. They matter only where a swap
    // competes with a recompute: the recompute-only run goes without.
    bool price_link = true;
  };
  GreedySolver() = default;
  explicit GreedySolver(Config config) : config_(config) {}
  std::string_view name() const override { return name_; }
  Solution solve(const Problem& problem, const SolverOptions& options) const override;
  GreedySolver& named(std::string name) {
    name_ = std::move(name);
    return *this;
  }

 private:
  void keep_the_fastest_run(const Problem& problem, const SolverOptions& options,
                            Solution& out) const;

  Config config_;
  std::string name_ = "greedy";
};

}  // namespace memplan::solvers
