#include "planner/feasibility_fallback.h"

#include <algorithm>
#include <numeric>

#include "planner/plan_search.h"

namespace memplan::planner {
namespace {

// What keeping candidate i saves against evicting it the way `choice` does.
double eviction_cost(const solvers::Candidate& c, Decision d) {
  return d == Decision::kSwap
             ? c.swap_exposed_seconds + 1e-3 * (c.swap_out_seconds + c.swap_in_seconds)
             : c.recompute_seconds;
}

class UndoSearch {
 public:
  UndoSearch(const ir::Graph& g, const ir::NodeCosts& costs, const solvers::Problem& p,
             std::uint64_t budget, const FallbackOptions& o)
      : g_(g), costs_(costs), p_(p), budget_(budget), options_(o) {}

  void set_prefetch_window(std::optional<std::size_t> w) { window_ = w; }

  std::optional<ScheduleResult> fits(const std::vector<Decision>& choice) {
    if (exhausted()) return std::nullopt;
    ++schedules_;
    ScheduleResult s =
        schedule_for(g_, costs_, decisions_by_tensor(g_, p_, choice), budget_, window_);
    if (!s.fits) return std::nullopt;
    return s;
  }

  // Tries to keep every candidate of `items` at once; where that breaks the
  // budget, each half on its own (bisection, so a run of undoable items
  // costs one schedule).
  void undo(FallbackPlan& plan, std::vector<std::size_t> items) {
    if (items.empty() || exhausted()) return;
    std::vector<Decision> trial = plan.choice;
    for (std::size_t i : items) trial[i] = Decision::kKeep;
    if (auto s = fits(trial)) {
      plan.choice = std::move(trial);
      plan.schedule = std::move(*s);
      return;
    }
    if (items.size() == 1) return;
    const auto mid = items.begin() + static_cast<std::ptrdiff_t>(items.size() / 2);
    undo(plan, std::vector<std::size_t>(items.begin(), mid));
    undo(plan, std::vector<std::size_t>(mid, items.end()));
  }

  int schedules() const { return schedules_; }

 private:
  // Interrupted, the search still runs a little: the plan written on
  // Ctrl-C should fit when it can.
  bool exhausted() const {
    const bool interrupted = options_.interrupted != nullptr && *options_.interrupted;
    return schedules_ >= (interrupted ? kInterruptedSchedules : options_.max_schedules);
  }
  static constexpr int kInterruptedSchedules = 16;

  const ir::Graph& g_;
  const ir::NodeCosts& costs_;
  const solvers::Problem& p_;
  std::uint64_t budget_;
  FallbackOptions options_;
  std::optional<std::size_t> window_;
  int schedules_ = 0;
};

}  // namespace

std::vector<EvictAll> evict_all_variants() {
  return {{Decision::kRecompute, true, std::nullopt},
          {Decision::kSwap, true, std::nullopt},
          {Decision::kSwap, false, 1}};
}

std::vector<Decision> evict_all_choice(const solvers::Problem& problem, const EvictAll& v) {
  const Decision first = v.first;
  const Decision other = first == Decision::kSwap ? Decision::kRecompute : Decision::kSwap;
  std::vector<Decision> all(problem.candidates.size(), Decision::kKeep);
  for (std::size_t i = 0; i < all.size(); ++i) {
    const auto& c = problem.candidates[i];
    const bool can_first = first == Decision::kSwap ? c.can_swap : c.can_recompute;
    const bool can_other = first == Decision::kSwap ? c.can_recompute : c.can_swap;
    all[i] = can_first ? first : (can_other && v.fall_back) ? other : Decision::kKeep;
  }
  return all;
}

std::optional<FallbackPlan> fit_from_evict_all(const ir::Graph& g, const ir::NodeCosts& costs,
                                               const solvers::Problem& p, std::uint64_t budget,
                                               const FallbackOptions& options) {
  UndoSearch search(g, costs, p, budget, options);
  std::optional<FallbackPlan> best;
  for (const EvictAll& v : evict_all_variants()) {
    search.set_prefetch_window(v.prefetch_window);
    FallbackPlan plan;
    plan.choice = evict_all_choice(p, v);
    auto s = search.fits(plan.choice);
    if (!s) continue;
    plan.schedule = std::move(*s);
    // Most expensive evictions first: those are the ones worth undoing.
    std::vector<std::size_t> evicted;
    for (std::size_t i = 0; i < plan.choice.size(); ++i)
      if (plan.choice[i] != Decision::kKeep) evicted.push_back(i);
    std::stable_sort(evicted.begin(), evicted.end(), [&](std::size_t a, std::size_t b) {
      return eviction_cost(p.candidates[a], plan.choice[a]) >
             eviction_cost(p.candidates[b], plan.choice[b]);
    });
    // In blocks of decreasing cost, so the dearest are tried first.
    const std::size_t block = std::max<std::size_t>(1, evicted.size() / 8);
    for (std::size_t at = 0; at < evicted.size(); at += block) {
      const auto end =
          evicted.begin() + static_cast<std::ptrdiff_t>(std::min(evicted.size(), at + block));
      search.undo(plan,
                  std::vector<std::size_t>(evicted.begin() + static_cast<std::ptrdiff_t>(at), end));
    }
    best = std::move(plan);
    break;  // the first that fits; the undo pass has spent the search budget on it
  }
  if (best) best->schedules = search.schedules();
  return best;
}

}  // namespace memplan::planner
