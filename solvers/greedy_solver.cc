#include "solvers/greedy_solver.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <numeric>
#include <queue>

#include "solvers/link_queue.h"
#include "solvers/model_eval.h"
#include "solvers/range_max_tree.h"

namespace memplan::solvers {
namespace {

using Clock = std::chrono::steady_clock;

// Compute seconds spanned by a window of steps (for memory-time freed).
struct Timeline {
  std::vector<double> prefix;  // by step count, uniform when unknown
  double span(const Interval& g) const {
    if (g.empty()) return 0;
    return prefix[static_cast<std::size_t>(g.end) + 1] - prefix[static_cast<std::size_t>(g.begin)];
  }
};

// Greedy state: which option each candidate has, the per-step excess over
// budget, and the link loads, kept in step with every move.
class State {
 public:
  State(const Problem& p)
      : p_(p), choice_(p.candidates.size(), Decision::kKeep), excess_(init(p)) {}

  const std::vector<Decision>& choice() const { return choice_; }
  bool fits() const { return excess_.max() <= 0; }
  std::int64_t worst() const { return excess_.max(); }
  std::int64_t worst_step() const { return excess_.argmax(); }
  bool covers_excess(std::size_t i, Decision d) const {
    const Interval* g = gap(i, d);
    return g != nullptr && !g->empty() && excess_.max(g->begin, g->end) > 0;
  }
  void set(std::size_t i, Decision d) {
    apply(i, choice_[i], +1);
    choice_[i] = d;
    apply(i, d, -1);
  }
  double cost(std::size_t i, Decision d) const {
    const Candidate& c = p_.candidates[i];
    return d == Decision::kSwap        ? c.swap_exposed_seconds
           : d == Decision::kRecompute ? c.recompute_seconds
                                       : 0.0;
  }
  // Cost of moving candidate i to option d, including what it adds to (or
  // takes from) the link excess: swaps past the hiding compute cost in full.
  double marginal(std::size_t i, Decision d) const {
    auto link = [&](double out, double in) {
      return std::max(0.0, out - p_.forward_seconds) + std::max(0.0, in - p_.backward_seconds);
    };
    const Candidate& c = p_.candidates[i];
    double out = out_, in = in_;
    if (choice_[i] == Decision::kSwap) {
      out -= c.swap_out_seconds;
      in -= c.swap_in_seconds;
    }
    double base = link(out, in);
    double after =
        d == Decision::kSwap ? link(out + c.swap_out_seconds, in + c.swap_in_seconds) : base;
    return cost(i, d) - cost(i, choice_[i]) + after - link(out_, in_);
  }
  double objective() const {
    double s = 0;
    for (std::size_t i = 0; i < choice_.size(); ++i) s += cost(i, choice_[i]);
    return s + std::max(0.0, out_ - p_.forward_seconds) + std::max(0.0, in_ - p_.backward_seconds);
  }
  const Interval* gap(std::size_t i, Decision d) const {
    const Candidate& c = p_.candidates[i];
    return d == Decision::kSwap        ? &c.swap_gap
           : d == Decision::kRecompute ? &c.recompute_gap
                                       : nullptr;
  }

 private:
  static RangeMaxTree init(const Problem& p) {
    std::vector<std::int64_t> v(p.step_bytes.size());
    for (std::size_t s = 0; s < v.size(); ++s)
      v[s] = static_cast<std::int64_t>(p.step_bytes[s]) - static_cast<std::int64_t>(p.budget_bytes);
    return RangeMaxTree(v);
  }
  // sign -1: the option frees its bytes over its window; +1 undoes that.
  void apply(std::size_t i, Decision d, int sign) {
    const Candidate& c = p_.candidates[i];
    if (d == Decision::kSwap) {
      out_ -= sign * c.swap_out_seconds;
      in_ -= sign * c.swap_in_seconds;
    }
    const Interval* g = gap(i, d);
    if (g != nullptr && !g->empty())
      excess_.add(g->begin, g->end, sign * static_cast<std::int64_t>(c.bytes));
  }

  const Problem& p_;
  std::vector<Decision> choice_;
  RangeMaxTree excess_;
  double out_ = 0, in_ = 0;
};

// The link queues (link_queue.h): where a replay of the chosen copies finds
// one waiting behind others, try the dearest swapped copies of that queue
// as recomputes, or kept where the budget allows, and keep a move when the
// model's cost plus the queue delay drops. At most kRounds moves, each
// trying kTries copies: a few hundred evaluations however large the graph.
void relieve_link_queues(const Problem& p, State& st) {
  constexpr int kRounds = 32;
  constexpr std::size_t kTries = 8;
  const LinkCopies copies = link_copies(p);
  const double tolerance = std::max(1e-6, 1e-4 * p.baseline_seconds);
  auto total = [&] { return st.objective() + queue_delay(copies, st.choice()); };
  double now = total();
  for (int round = 0; round < kRounds; ++round) {
    std::vector<LinkCut> cuts = late_copy_cuts(copies, st.choice(), tolerance);
    if (cuts.empty()) return;
    // The swapped copies of every late period, largest first.
    std::vector<std::pair<double, std::size_t>> queued;
    for (const LinkCut& cut : cuts)
      for (std::size_t k = 0; k < cut.members.size(); ++k)
        if (st.choice()[cut.members[k]] == Decision::kSwap)
          queued.emplace_back(cut.seconds[k], cut.members[k]);
    std::sort(queued.rbegin(), queued.rend());
    std::size_t best = 0;
    Decision best_d = Decision::kSwap;
    double best_total = now - tolerance;
    for (std::size_t k = 0; k < queued.size() && k < kTries; ++k) {
      const std::size_t i = queued[k].second;
      for (Decision d : {Decision::kRecompute, Decision::kKeep}) {
        if (!allowed(p.candidates[i], d)) continue;
        st.set(i, d);
        const double t = st.fits() ? total() : best_total + 1;
        if (t < best_total) {
          best_total = t;
          best = i;
          best_d = d;
        }
        st.set(i, Decision::kSwap);
      }
    }
    if (best_d == Decision::kSwap) return;  // nothing helps
    st.set(best, best_d);
    now = best_total;
  }
}

}  // namespace

Solution GreedySolver::solve(const Problem& p, const SolverOptions& options) const {
  const auto start = Clock::now();
  const std::size_t n = p.candidates.size();
  Timeline tl;
  tl.prefix.resize(p.step_bytes.size() + 1);
  // Windows measured in compute seconds; in steps when times are unknown.
  const bool timed = p.step_seconds.size() == p.step_bytes.size();
  for (std::size_t s = 0; s < p.step_bytes.size(); ++s)
    tl.prefix[s + 1] = tl.prefix[s] + (timed ? p.step_seconds[s] : 1.0);

  // The better option per candidate: memory-time freed per second of cost.
  const double eps = 1e-9;
  std::vector<Decision> preferred(n, Decision::kKeep);
  std::vector<double> ratio(n, 0.0);
  State st(p);
  for (std::size_t i = 0; i < n; ++i) {
    const Candidate& c = p.candidates[i];
    for (Decision d : {Decision::kSwap, Decision::kRecompute}) {
      bool ok = d == Decision::kSwap ? (c.can_swap && config_.allow_swap)
                                     : (c.can_recompute && config_.allow_recompute);
      if (!ok) continue;
      double r = static_cast<double>(c.bytes) * tl.span(*st.gap(i, d)) / (st.cost(i, d) + eps);
      if (preferred[i] == Decision::kKeep || r > ratio[i]) {
        preferred[i] = d;
        ratio[i] = r;
      }
    }
  }
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](auto a, auto b) { return ratio[a] > ratio[b]; });

  auto option_ok = [&](std::size_t i, Decision d) {
    const Candidate& c = p.candidates[i];
    return d == Decision::kSwap ? (c.can_swap && config_.allow_swap)
                                : (c.can_recompute && config_.allow_recompute);
  };
  // The best option of a kept candidate now: memory-time freed per second
  // it adds (link included), among options whose window covers excess.
  auto best_now = [&](std::size_t i, Decision& best) {
    double r = -1;
    best = Decision::kKeep;
    for (Decision d : {Decision::kSwap, Decision::kRecompute}) {
      if (!option_ok(i, d) || !st.covers_excess(i, d)) continue;
      double v = static_cast<double>(p.candidates[i].bytes) * tl.span(*st.gap(i, d)) /
                 (st.marginal(i, d) + eps);
      if (v > r) {
        r = v;
        best = d;
      }
    }
    return r;
  };
  // Lazy greedy: costs only grow as the link fills, so a popped entry whose
  // fresh ratio still tops the heap is the true best.
  auto fill = [&](double cost_limit, std::size_t skip) {
    std::priority_queue<std::pair<double, std::size_t>> heap;
    for (std::size_t i : order)
      if (st.choice()[i] == Decision::kKeep && i != skip && preferred[i] != Decision::kKeep)
        heap.emplace(ratio[i], i);
    while (!st.fits() && !heap.empty()) {
      auto [r, i] = heap.top();
      heap.pop();
      Decision d;
      double fresh = best_now(i, d);
      if (d == Decision::kKeep || st.marginal(i, d) > cost_limit) continue;
      if (!heap.empty() && fresh < heap.top().first) {
        heap.emplace(fresh, i);
        continue;
      }
      st.set(i, d);
    }
  };
  // Repair: while a step is still over budget, take the cheapest move per
  // byte among candidates whose other window covers it.
  auto repair = [&] {
    while (!st.fits()) {
      const std::int64_t s_worst = st.worst_step();
      std::size_t best_i = n;
      Decision best_d = Decision::kKeep;
      double best_v = 0;
      for (std::size_t i = 0; i < n; ++i) {
        const Interval* cur = st.gap(i, st.choice()[i]);
        if (cur != nullptr && cur->contains(s_worst)) continue;
        for (Decision d : {Decision::kSwap, Decision::kRecompute}) {
          if (!option_ok(i, d) || !st.gap(i, d)->contains(s_worst)) continue;
          double v = st.marginal(i, d) / static_cast<double>(p.candidates[i].bytes);
          if (best_i == n || v < best_v) {
            best_i = i;
            best_d = d;
            best_v = v;
          }
        }
      }
      if (best_i == n) return;  // nothing left covers that step
      st.set(best_i, best_d);
    }
  };
  // Phase 1: lazy greedy, then repair.
  fill(std::numeric_limits<double>::infinity(), n);
  repair();

  // Phase 2: local search on the model.
  auto undo_pass = [&] {
    std::vector<std::size_t> chosen;
    for (std::size_t i = 0; i < n; ++i)
      if (st.choice()[i] != Decision::kKeep) chosen.push_back(i);
    std::stable_sort(chosen.begin(), chosen.end(), [&](auto a, auto b) {
      return st.cost(a, st.choice()[a]) > st.cost(b, st.choice()[b]);
    });
    for (std::size_t i : chosen) {
      Decision was = st.choice()[i];
      st.set(i, Decision::kKeep);
      if (!st.fits()) st.set(i, was);
    }
  };
  auto flip_pass = [&] {
    for (std::size_t i = 0; i < n; ++i) {
      Decision was = st.choice()[i];
      if (was == Decision::kKeep) continue;
      Decision other = was == Decision::kSwap ? Decision::kRecompute : Decision::kSwap;
      const Candidate& c = p.candidates[i];
      bool ok = other == Decision::kSwap ? (c.can_swap && config_.allow_swap)
                                         : (c.can_recompute && config_.allow_recompute);
      if (!ok) continue;
      double before = st.objective();
      st.set(i, other);
      if (!st.fits() || st.objective() >= before - 1e-15) st.set(i, was);
    }
  };
  if (st.fits()) {
    undo_pass();
    flip_pass();
    // Exchange: drop an expensive choice, refill from cheaper candidates.
    for (int round = 0; round < config_.exchange_rounds; ++round) {
      if (options.interrupted != nullptr && *options.interrupted) break;
      std::size_t worst_i = n;
      double worst_c = 0;
      for (std::size_t i = 0; i < n; ++i) {
        double c = st.cost(i, st.choice()[i]);
        if (st.choice()[i] != Decision::kKeep && c > worst_c && ratio[i] >= 0) {
          worst_c = c;
          worst_i = i;
        }
      }
      if (worst_i == n) break;
      const std::vector<Decision> saved = st.choice();
      const double before = st.objective();
      ratio[worst_i] = -1;  // tried once
      st.set(worst_i, Decision::kKeep);
      fill(worst_c, worst_i);
      if (st.fits()) undo_pass();
      if (!st.fits() || st.objective() >= before - 1e-15) {
        for (std::size_t i = 0; i < n; ++i)
          if (st.choice()[i] != saved[i]) st.set(i, saved[i]);
      }
    }
  }

  Solution out;
  if (st.fits()) {
    // The replay is the model's timeline, not the schedule's: keep the
    // relieved plan only where the simulator agrees it is faster.
    const std::vector<Decision> before = st.choice();
    relieve_link_queues(p, st);
    if (options.simulate && st.choice() != before) {
      const auto relieved = options.simulate(st.choice()), plain = options.simulate(before);
      if (plain && (!relieved || *plain <= *relieved))
        for (std::size_t i = 0; i < n; ++i) st.set(i, before[i]);
    }
  }
  out.choice = st.choice();
  // Phase 3: undo moves the simulator confirms (the model is an estimate).
  if (options.simulate && st.fits() && config_.simulate_calls > 0) {
    auto current = options.simulate(out.choice);
    int calls = 1;
    std::vector<std::size_t> chosen;
    for (std::size_t i = 0; i < n; ++i)
      if (out.choice[i] != Decision::kKeep) chosen.push_back(i);
    std::stable_sort(chosen.begin(), chosen.end(), [&](auto a, auto b) {
      return st.cost(a, out.choice[a]) > st.cost(b, out.choice[b]);
    });
    for (std::size_t i : chosen) {
      if (!current || calls >= config_.simulate_calls) break;
      if (options.interrupted != nullptr && *options.interrupted) break;
      Decision was = out.choice[i];
      st.set(i, Decision::kKeep);
      if (!st.fits()) {
        st.set(i, was);
        continue;
      }
      auto trial = st.choice();
      auto t = options.simulate(trial);
      ++calls;
      if (t && *t < *current) {
        current = t;
        out.choice = trial;
      } else {
        st.set(i, was);
      }
    }
  }
  ModelEval e = evaluate(p, out.choice);
  out.objective_seconds = e.overhead_seconds;
  out.status = e.fits ? "heuristic" : "infeasible";
  out.solve_seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return out;
}

}  // namespace memplan::solvers
