#include "planner/scheduler.h"

#include <algorithm>
#include <string>

#include "ir/memory_tracker.h"
#include "planner/nested_remake.h"
#include "planner/prefetch.h"
#include "planner/reload_plan.h"
#include "planner/schedule_emit.h"
#include "planner/segment_split.h"

namespace memplan::planner {
namespace {

std::string quoted(const std::string& s) { return "'" + s + "'"; }

std::string describe(const ir::Graph& graph, const Step& step) {
  std::string text(to_string(step.op));
  if (step.on_node()) return text + " " + quoted(graph.node(step.id).name);
  return text + " " + quoted(graph.tensor(step.id).name);
}

// One line: where memory peaks and the largest tensors resident there, found
// by replaying the schedule up to that step.
std::string diagnose(const ir::Graph& graph, const ScheduleResult& r, std::uint64_t budget,
                     const std::vector<Decision>& applied) {
  const auto& tensors = graph.tensors();
  ir::MemoryTracker memory = ir::MemoryTracker::at_start(graph);
  std::string where = "the initial state";
  for (std::int64_t i = 0; i <= r.worst_step; ++i) {
    const Step& s = r.schedule[static_cast<std::size_t>(i)];
    switch (s.op) {
      case StepOp::kCompute:
      case StepOp::kRecompute:
        for (ir::TensorId out : graph.node(s.id).outputs) memory.allocate(out);
        break;
      case StepOp::kSwapIn:
        memory.allocate(s.id);
        break;
      case StepOp::kFree:
        memory.release(s.id);
        break;
      case StepOp::kSwapOut:
        break;
    }
  }
  if (r.worst_step >= 0) {
    where = "step " + std::to_string(r.worst_step) + " (" +
            describe(graph, r.schedule[static_cast<std::size_t>(r.worst_step)]) + ")";
  }
  std::vector<ir::TensorId> held = memory.resident_tensors();
  const std::size_t shown = std::min<std::size_t>(3, held.size());
  std::partial_sort(held.begin(), held.begin() + static_cast<std::ptrdiff_t>(shown), held.end(),
                    [&](ir::TensorId a, ir::TensorId b) {
                      if (tensors[a].bytes != tensors[b].bytes)
                        return tensors[a].bytes > tensors[b].bytes;
                      return a < b;
                    });
  std::string line = "peak " + std::to_string(r.peak_bytes) + " B at " + where + " is " +
                     std::to_string(r.over_budget_bytes) + " B over the budget of " +
                     std::to_string(budget) + " B; largest resident:";
  for (std::size_t i = 0; i < shown; ++i) {
    const ir::Tensor& t = tensors[held[i]];
    line += std::string(i == 0 ? " " : ", ") + quoted(t.name) + " " + std::to_string(t.bytes) +
            " B (" + std::string(ir::to_string(t.cls)) + ", " +
            std::string(to_string(applied[held[i]])) + ")";
  }
  return line;
}

// A swap_out whose tensor is never swapped back in nor remade only loads
// the link (its reload found the tensor still resident, its free pending on
// the copy): dropped, and the tensor counts as kept. (One that a sibling's
// recompute remade stays: the tensor was evicted as asked.)
void drop_unused_swap_outs(const ir::Graph& graph, ScheduleResult& r) {
  std::vector<char> swapped_in(r.applied.size(), 0), remade(graph.nodes().size(), 0);
  for (const Step& s : r.schedule) {
    if (s.op == StepOp::kSwapIn) swapped_in[s.id] = 1;
    if (s.op == StepOp::kRecompute) remade[s.id] = 1;
  }
  auto unused = [&](ir::TensorId t) {
    const ir::NodeId producer = graph.tensor(t).producer;
    return r.applied[t] == Decision::kSwap && !swapped_in[t] &&
           (producer == ir::kNoNode || !remade[producer]);
  };
  std::vector<Step> kept;
  kept.reserve(r.schedule.size());
  std::int64_t worst = r.worst_step;
  for (std::size_t i = 0; i < r.schedule.size(); ++i) {
    const Step& s = r.schedule[i];
    if (s.op == StepOp::kSwapOut && unused(s.id)) {
      if (static_cast<std::int64_t>(i) <= r.worst_step) --worst;
      continue;
    }
    kept.push_back(s);
  }
  r.schedule = std::move(kept);
  r.worst_step = worst;
  for (ir::TensorId t = 0; t < r.applied.size(); ++t)
    if (unused(t)) r.applied[t] = Decision::kKeep;
}

// Where a round stands: the splits so far and the best schedule yet.
struct RoundState {
  std::vector<std::vector<ir::NodeId>> splits;
  ScheduleResult result;
  std::size_t round = 0;
};

// The schedule's rounds: the first holds every reloaded tensor until its
// last reader; each later one repairs what is over the budget (rule 7).
// Each round schedules from scratch; the best (lowest peak, then earliest)
// is kept, so a split that backfires costs time but never memory.
class Rounds {
 public:
  Rounds(const ir::Graph& graph, const ir::NodeCosts& costs, const std::vector<Decision>& requested,
         const ScheduleOptions& options, detail::SplitOrder order)
      : graph_(graph), costs_(costs), requested_(requested), options_(options), order_(order) {
    emit_.budget_bytes = options.budget_bytes;
    emit_.defer_swap_frees = options.defer_swap_frees;
    prefetch_.budget_bytes = options.budget_bytes;
    prefetch_.window_steps = options.prefetch_window;
    prefetch_.h2d_bytes_per_s = costs.device.h2d_bytes_per_s;
  }

  // With `nest`, runs of remakes are nested (nested_remake.h) and the
  // rounds go on while they lower the peak, up to twice as many.
  // Whether nesting could take `excess` bytes off: a nested run still holds
  // two of its tensors, so at most the rest of every run can go.
  bool nesting_can_relieve(std::uint64_t excess) const {
    std::uint64_t relief = 0;
    for (const detail::RemakeRun& run : runs_) relief += (run.tensors.size() - 2) * run.bytes;
    return relief >= excess;
  }

  ScheduleResult run(bool nest) { return run_from(nest, RoundState{}); }

  // The rounds from `state` on: from round 0, or from where the other
  // order's pass first chose other splits (other_start).
  ScheduleResult run_from(bool nest, RoundState state) {
    std::vector<detail::RemakeRun> runs = runs_;
    std::vector<char> owned;
    const std::size_t rounds = nest ? 2 * options_.split_rounds : options_.split_rounds;
    ScheduleResult& result = state.result;
    for (std::size_t& round = state.round;; ++round) {
      const detail::ReloadPlan plan = detail::plan_reloads(graph_, requested_, state.splits);
      const detail::Skeleton skeleton = detail::emit_skeleton(graph_, costs_, plan, emit_);
      detail::Placed placed = detail::place_swap_ins(graph_, skeleton, prefetch_);
      // A round that did not lower the peak is a sign the excess is not made
      // of held reloads; stop rather than pile up splits (and time).
      const bool progress = round == 0 || placed.peak_bytes < result.peak_bytes;
      if (progress) keep(plan, skeleton, placed, result);
      if (result.peak_bytes <= options_.budget_bytes || round >= rounds || !progress) break;
      if (round == 0 && !nest) runs_ = detail::find_remake_runs(graph_, plan);
      if (round == 0 && nest) owned = detail::remake_run_tensors(graph_.tensors().size(), runs);
      const bool nested = detail::nest_over_budget(skeleton, placed, options_.budget_bytes, graph_,
                                                   runs, state.splits);
      const std::vector<detail::Split> chosen = choose(plan, skeleton, placed, owned, order_);
      if (!nest && order_ == detail::SplitOrder::kLargest)
        compare_orders(plan, skeleton, placed, chosen, state);
      detail::apply_splits(graph_, plan, chosen, state.splits);
      if (!nested && chosen.empty()) break;
    }
    return std::move(result);
  }

  // Whether, in some plain round of the largest-first pass, the
  // cheapest-first order would have chosen other splits: only then can its
  // pass end elsewhere (each round is a function of the splits before it).
  bool orders_differ() const { return orders_differ_; }
  // Where the cheapest-first pass stands after the first round where the
  // orders differ: it needs none of the rounds before.
  RoundState other_start() { return std::move(other_start_); }

 private:
  std::vector<detail::Split> choose(const detail::ReloadPlan& plan,
                                    const detail::Skeleton& skeleton, const detail::Placed& placed,
                                    std::span<const char> owned, detail::SplitOrder order) const {
    return detail::choose_splits(graph_, costs_, plan, skeleton, placed, options_.budget_bytes,
                                 owned, order);
  }

  // The largest-first pass only: what the cheapest-first order would split
  // in the same round.
  void compare_orders(const detail::ReloadPlan& plan, const detail::Skeleton& skeleton,
                      const detail::Placed& placed, std::vector<detail::Split> chosen,
                      const RoundState& state) {
    if (orders_differ_ || chosen.empty()) return;
    std::vector<detail::Split> other =
        choose(plan, skeleton, placed, {}, detail::SplitOrder::kCheapest);
    std::sort(chosen.begin(), chosen.end());
    std::sort(other.begin(), other.end());
    if (other == chosen) return;
    // Every round before this one chose alike, so the other pass would be
    // here too: it goes on from this round with its own splits.
    orders_differ_ = true;
    other_start_ = {state.splits, state.result, state.round + 1};
    detail::apply_splits(graph_, plan, other, other_start_.splits);
  }

  static void keep(const detail::ReloadPlan& plan, const detail::Skeleton& skeleton,
                   detail::Placed& placed, ScheduleResult& result) {
    result.estimated_seconds = skeleton.clock.empty() ? 0 : skeleton.clock.back();
    result.schedule = std::move(placed.schedule);
    result.peak_bytes = placed.peak_bytes;
    result.worst_step = placed.peak_step;
    result.applied.clear();
    for (const detail::TensorPlan& p : plan.tensors) result.applied.push_back(p.applied);
  }

  const ir::Graph& graph_;
  const ir::NodeCosts& costs_;
  const std::vector<Decision>& requested_;
  const ScheduleOptions& options_;
  detail::SplitOrder order_;
  bool orders_differ_ = false;
  RoundState other_start_;
  // The runs of the plain rounds' first plan, found once it is over the
  // budget: nesting has nothing to do without them.
  std::vector<detail::RemakeRun> runs_;
  detail::EmitOptions emit_;
  detail::PrefetchOptions prefetch_;
};

// Of two split orders' schedules: the one that fits, then the one whose
// compute stream (recomputes and waits for frees) is estimated to end
// first, then the lower peak.
bool better_split(const ScheduleResult& a, const ScheduleResult& b, std::uint64_t budget) {
  const bool fa = a.peak_bytes <= budget, fb = b.peak_bytes <= budget;
  if (fa != fb) return fa;
  if (!fa) return a.peak_bytes < b.peak_bytes;
  return a.estimated_seconds < b.estimated_seconds;
}

}  // namespace

ScheduleResult schedule_for(const ir::Graph& graph, const ir::NodeCosts& costs,
                            const std::vector<Decision>& decisions, std::uint64_t budget,
                            std::optional<std::size_t> prefetch_window) {
  ScheduleOptions o;
  o.budget_bytes = budget;
  if (prefetch_window) o.prefetch_window = *prefetch_window;
  return make_schedule(graph, costs, decisions, o);
}

ScheduleResult make_schedule(const ir::Graph& graph, const ir::NodeCosts& costs,
                             const std::vector<Decision>& decisions,
                             const ScheduleOptions& options) {
  const std::vector<Decision> requested = detail::applicable_decisions(graph, decisions);
  Rounds rounds(graph, costs, requested, options, detail::SplitOrder::kLargest);
  ScheduleResult result = rounds.run(false);
  if (rounds.orders_differ()) {
    Rounds cheapest(graph, costs, requested, options, detail::SplitOrder::kCheapest);
    ScheduleResult other = cheapest.run_from(false, rounds.other_start());
    if (better_split(other, result, options.budget_bytes)) result = std::move(other);
  }
  // Nesting only where holding and rerunning did not fit: elsewhere the
  // schedule is the one the solvers' model describes.
  if (result.peak_bytes > options.budget_bytes && options.nest_remakes &&
      rounds.nesting_can_relieve(result.peak_bytes - options.budget_bytes)) {
    ScheduleResult nested = rounds.run(true);
    if (nested.peak_bytes < result.peak_bytes) {
      nested.unnested_over_bytes = result.peak_bytes - options.budget_bytes;
      result = std::move(nested);
    }
  }
  drop_unused_swap_outs(graph, result);
  result.fits = result.peak_bytes <= options.budget_bytes;
  if (!result.fits) {
    result.over_budget_bytes = result.peak_bytes - options.budget_bytes;
    result.diagnosis = diagnose(graph, result, options.budget_bytes, result.applied);
  }
  return result;
}

}  // namespace memplan::planner
