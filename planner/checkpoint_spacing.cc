#include "planner/checkpoint_spacing.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "planner/plan_search.h"

namespace memplan::planner {
namespace {

// About max_spacings values from √C/2 to 2√C + 1, each at least 2.
std::vector<std::size_t> spacings(std::size_t candidates, std::size_t max_spacings) {
  const double root = std::sqrt(static_cast<double>(candidates));
  const auto lo = std::max<std::size_t>(2, static_cast<std::size_t>(root / 2));
  const auto hi = std::max(lo, static_cast<std::size_t>(2 * root) + 1);
  const std::size_t step = std::max<std::size_t>(1, (hi - lo + max_spacings) / max_spacings);
  std::vector<std::size_t> out;
  for (std::size_t k = lo; k <= hi; k += step) out.push_back(k);
  return out;
}

}  // namespace

std::optional<SpacedPlan> fit_by_checkpoint_spacing(
    const ir::Graph& graph, const ir::NodeCosts& costs, const solvers::Problem& problem,
    std::uint64_t budget, const std::function<double(const ScheduleResult&)>& seconds_of,
    const SpacingOptions& options) {
  // Checkpoints are spaced over the activations; training state stays
  // evicted (swapped) as in the evict-all plan.
  std::vector<std::size_t> by_made;
  for (std::size_t i = 0; i < problem.candidates.size(); ++i)
    if (!problem.candidates[i].state) by_made.push_back(i);
  const std::size_t n = by_made.size();
  if (n < 4 || n > options.max_candidates) return std::nullopt;
  std::stable_sort(by_made.begin(), by_made.end(), [&](std::size_t a, std::size_t b) {
    return problem.candidates[a].made < problem.candidates[b].made;
  });
  const std::vector<Decision> evicted = evict_all_choice(problem, EvictAll{});
  ScheduleOptions so;
  so.budget_bytes = budget;
  std::optional<SpacedPlan> best;
  for (std::size_t k : spacings(n, options.max_spacings)) {
    if (options.interrupted != nullptr && *options.interrupted) break;
    std::vector<Decision> choice = evicted;
    for (std::size_t i = k - 1; i < n; i += k) choice[by_made[i]] = Decision::kKeep;
    ScheduleResult s = make_schedule(graph, costs, decisions_by_tensor(graph, problem, choice), so);
    if (!s.fits) continue;
    const double seconds = seconds_of(s);
    if (best && best->seconds <= seconds) continue;
    best = SpacedPlan{FallbackPlan{std::move(choice), std::move(s), 0}, k, seconds};
  }
  return best;
}

}  // namespace memplan::planner
