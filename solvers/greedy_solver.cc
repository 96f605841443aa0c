#include "solvers/greedy_solver.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <deque>
#include <limits>
#include <numeric>
#include <optional>
#include <queue>
#include <thread>

#include "solvers/evictions.h"
#include "solvers/greedy_state.h"
#include "solvers/interval_stab.h"
#include "solvers/link_queue.h"
#include "solvers/model_eval.h"

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

// The link queues (link_queue.h): while the replay of the chosen copies
// stalls the compute, try the dearest swapped copies of the late queue
// periods as recomputes, or kept where the budget allows, and keep a move
// when the replayed objective drops. At most kRounds moves, each trying
// kTries copies: a few hundred evaluations however large the graph.
void relieve_link_queues(const Problem& p, GreedyState& st) {
  constexpr int kRounds = 32;
  constexpr std::size_t kTries = 8;
  const LinkCopies copies = link_copies(p);
  const double tolerance = std::max(1e-6, 1e-4 * p.baseline_seconds);
  auto replay = [&] { return replayed_objective(p, st.choice(), evaluate(p, st.choice())); };
  ReplayedObjective now = replay();
  for (int round = 0; round < kRounds; ++round) {
    if (now.link_stall_seconds <= tolerance) return;
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
    ReplayedObjective best_replay{now.seconds - tolerance, 0};
    for (std::size_t k = 0; k < queued.size() && k < kTries; ++k) {
      const std::size_t i = queued[k].second;
      for (Decision d : {Decision::kRecompute, Decision::kKeep}) {
        if (!allowed(p.candidates[i], d)) continue;
        st.set(i, d);
        if (st.fits()) {
          const ReplayedObjective r = replay();
          if (r.seconds < best_replay.seconds) {
            best_replay = r;
            best = i;
            best_d = d;
          }
        }
        st.set(i, Decision::kSwap);
      }
    }
    if (best_d == Decision::kSwap) return;  // nothing helps
    st.set(best, best_d);
    now = best_replay;
  }
}

// One run of the heuristic (docs/model.md §Greedy) with the options a
// config allows: rank, fill, repair, local search on the model, queue
// relief, then undo moves the simulator confirms.
class GreedyRun {
 public:
  GreedyRun(const Problem& p, const GreedySolver::Config& config, const SolverOptions& options)
      : p_(p), config_(config), options_(options), n_(p.candidates.size()), st_(p) {
    tl_.prefix.resize(p.step_bytes.size() + 1);
    // Windows measured in compute seconds; in steps when times are unknown.
    const bool timed = p.step_seconds.size() == p.step_bytes.size();
    for (std::size_t s = 0; s < p.step_bytes.size(); ++s)
      tl_.prefix[s + 1] = tl_.prefix[s] + (timed ? p.step_seconds[s] : 1.0);
  }

  std::vector<Decision> run() {
    start();
    if (st_.fits()) {
      flip_pass();
      exchange();
      relieve();
      replayed_exchange();
    }
    return st_.fits() ? simulated_undo() : st_.choice();
  }

  bool fits() const { return st_.fits(); }
  // The simulator's time for what run() returned, where it was asked.
  std::optional<double> simulated() const { return simulated_; }

 private:
  static constexpr double kEps = 1e-9;
  static constexpr std::size_t kNone = static_cast<std::size_t>(-1);

  // The first assignment: rank, fill, repair, undo, at each link price
  // (seconds of cost per second of copy) while the link is busy; the price
  // with the lowest model objective wins. Unpriced, every swap the link can
  // hide looks free, and the largest long-lived tensors take the link first
  // even where recomputing them is nearly free (Dropout outputs from their
  // masks), leaving tensors that cannot be recomputed nowhere to go:
  // bert_large v100 60 %, objective 51.3 ms unpriced, 16.3 ms at 0.03.
  void start() {
    constexpr double kLinkPrices[] = {0.0, 0.01, 0.03, 0.1, 0.3};
    std::vector<Decision> best;
    bool best_fits = false;
    double best_objective = 0, best_price = 0;
    for (double price : kLinkPrices) {
      if (price > 0 && (!config_.price_link || !st_.link_busy())) break;
      restore(std::vector<Decision>(n_, Decision::kKeep));
      link_price_ = price;
      rank();
      fill(std::numeric_limits<double>::infinity(), n_);
      repair();
      if (st_.fits()) undo_pass();
      const double objective = st_.objective();
      if (price == 0 || (st_.fits() && (!best_fits || objective < best_objective))) {
        best = st_.choice();
        best_fits = st_.fits();
        best_objective = objective;
        best_price = price;
      }
    }
    restore(best);
    if (link_price_ != best_price) {
      link_price_ = best_price;
      rank();
    }
  }

  bool option_ok(std::size_t i, Decision d) const { return allowed(p_.candidates[i], d); }
  double freed_per_second(std::size_t i, Decision d, double cost) const {
    const Candidate& c = p_.candidates[i];
    if (d == Decision::kSwap) cost += link_price_ * (c.swap_out_seconds + c.swap_in_seconds);
    return static_cast<double>(c.bytes) * tl_.span(*st_.gap(i, d)) / (cost + kEps);
  }

  // The better option per candidate: memory-time freed per second of cost;
  // candidates in decreasing order of it.
  void rank() {
    preferred_.assign(n_, Decision::kKeep);
    ratio_.assign(n_, 0.0);
    for (std::size_t i = 0; i < n_; ++i) {
      for (Decision d : {Decision::kSwap, Decision::kRecompute}) {
        if (!option_ok(i, d)) continue;
        const double r = freed_per_second(i, d, st_.cost(i, d));
        if (preferred_[i] == Decision::kKeep || r > ratio_[i]) {
          preferred_[i] = d;
          ratio_[i] = r;
        }
      }
    }
    order_.resize(n_);
    std::iota(order_.begin(), order_.end(), 0);
    std::stable_sort(order_.begin(), order_.end(),
                     [&](auto a, auto b) { return ratio_[a] > ratio_[b]; });
  }

  // The best option of a kept candidate now: memory-time freed per second
  // it adds (link included), among options whose window covers excess.
  double best_now(std::size_t i, Decision& best) const {
    double r = -1;
    best = Decision::kKeep;
    for (Decision d : {Decision::kSwap, Decision::kRecompute}) {
      if (!option_ok(i, d) || !st_.covers_excess(i, d)) continue;
      const double v = freed_per_second(i, d, st_.marginal(i, d));
      if (v > r) {
        r = v;
        best = d;
      }
    }
    return r;
  }

  // Lazy greedy: costs only grow as the link fills, so a popped entry whose
  // fresh ratio still tops the heap is the true best.
  void fill(double cost_limit, std::size_t skip) {
    // Built in O(n), not pushed one by one: the pairs are distinct, so the
    // pops come in the same order either way.
    std::vector<std::pair<double, std::size_t>> entries;
    for (std::size_t i : order_)
      if (st_.choice()[i] == Decision::kKeep && i != skip && preferred_[i] != Decision::kKeep)
        entries.emplace_back(ratio_[i], i);
    std::priority_queue<std::pair<double, std::size_t>> heap(
        std::less<std::pair<double, std::size_t>>(), std::move(entries));
    while (!st_.fits() && !heap.empty()) {
      const std::size_t i = heap.top().second;
      heap.pop();
      Decision d;
      const double fresh = best_now(i, d);
      if (d == Decision::kKeep || st_.marginal(i, d) > cost_limit) continue;
      if (!heap.empty() && fresh < heap.top().first) {
        heap.emplace(fresh, i);
        continue;
      }
      st_.set(i, d);
    }
  }

  // While a step is still over budget, the cheapest move per byte among
  // candidates whose other window covers it; ties go to the lowest
  // candidate, swap before recompute.
  void repair() {
    // Chain holds can move the worst step back and forth: a bounded number
    // of moves.
    for (std::size_t moves = 0; !st_.fits() && moves < 4 * n_ + 16; ++moves) {
      const std::int64_t s_worst = st_.worst_step();
      std::size_t best = kNone;
      double best_v = 0;
      windows().for_each_containing(s_worst, [&](std::size_t id) {
        const std::size_t i = id / 2;
        const Decision d = option_of(id);
        const Interval* cur = st_.gap(i, st_.choice()[i]);
        if (!option_ok(i, d) || (cur != nullptr && cur->contains(s_worst))) return;
        const double v = st_.marginal(i, d) / static_cast<double>(p_.candidates[i].bytes);
        if (best == kNone || v < best_v || (v == best_v && id < best)) {
          best = id;
          best_v = v;
        }
      });
      if (best == kNone) return;  // nothing left covers that step
      st_.set(best / 2, option_of(best));
    }
  }

  // Window 2i is candidate i's swap gap, 2i + 1 its recompute gap.
  static Decision option_of(std::size_t id) {
    return id % 2 == 0 ? Decision::kSwap : Decision::kRecompute;
  }
  // Built on first use: most runs fit after the fill and never repair.
  const IntervalStab& windows() {
    if (!windows_) {
      std::vector<Interval> gaps;
      gaps.reserve(2 * n_);
      for (const Candidate& c : p_.candidates) {
        gaps.push_back(c.swap_gap);
        gaps.push_back(c.recompute_gap);
      }
      windows_.emplace(static_cast<std::int64_t>(p_.step_bytes.size()), gaps);
    }
    return *windows_;
  }

  // The chosen candidates, dearest first.
  std::vector<std::size_t> chosen_by_cost(const std::vector<Decision>& choice) const {
    std::vector<std::size_t> chosen;
    for (std::size_t i = 0; i < n_; ++i)
      if (choice[i] != Decision::kKeep) chosen.push_back(i);
    std::stable_sort(chosen.begin(), chosen.end(), [&](auto a, auto b) {
      return st_.cost(a, choice[a]) > st_.cost(b, choice[b]);
    });
    return chosen;
  }

  void undo_pass() {
    for (std::size_t i : chosen_by_cost(st_.choice())) {
      // Most undos fail; telling so without the move and its way back
      // halves the replayed moves' time on synth10k.
      if (const auto fits = st_.fits_if_kept(i); fits && !*fits) continue;
      const Decision was = st_.choice()[i];
      st_.set(i, Decision::kKeep);
      if (!st_.fits()) st_.set(i, was);
    }
  }

  void flip_pass() {
    for (std::size_t i = 0; i < n_; ++i) {
      const Decision was = st_.choice()[i];
      if (was == Decision::kKeep) continue;
      const Decision other = was == Decision::kSwap ? Decision::kRecompute : Decision::kSwap;
      if (!option_ok(i, other)) continue;
      const double before = st_.objective();
      st_.set(i, other);
      if (!st_.fits() || st_.objective() >= before - 1e-15) st_.set(i, was);
    }
  }

  // Drop the dearest choice, refill from cheaper candidates; kept only if
  // the objective drops.
  void exchange() {
    const int patience = n_ > GreedySolver::kAlternativesMaxCandidates
                             ? GreedySolver::kLargeExchangePatience
                             : config_.exchange_rounds;
    for (int round = 0, idle = 0; round < config_.exchange_rounds && idle < patience; ++round) {
      if (options_.interrupted != nullptr && *options_.interrupted) break;
      std::size_t worst_i = n_;
      double worst_c = 0;
      for (std::size_t i = 0; i < n_; ++i) {
        const double c = st_.cost(i, st_.choice()[i]);
        if (st_.choice()[i] != Decision::kKeep && c > worst_c && ratio_[i] >= 0) {
          worst_c = c;
          worst_i = i;
        }
      }
      if (worst_i == n_) break;
      const std::vector<Decision> saved = st_.choice();
      const double before = st_.objective();
      ratio_[worst_i] = -1;  // tried once
      if (!move_and_refill(worst_i, Decision::kKeep, worst_c) ||
          st_.objective() >= before - 1e-15) {
        restore(saved);
        ++idle;
      } else {
        idle = 0;
      }
    }
  }

  // Candidate i to option d, the plan refilled from candidates that add at
  // most `cost_limit` each and, where it fits, trimmed by undo. The move of
  // both exchanges; returns whether the plan fits.
  bool move_and_refill(std::size_t i, Decision d, double cost_limit) {
    st_.set(i, d);
    fill(cost_limit, i);
    if (st_.fits()) undo_pass();
    return st_.fits();
  }

  // Local search judged by the replayed objective, which charges what the
  // copies queue for: the model's exchange sees a hidden swap as free and
  // never drops one (gpt2_small v100 30 %: the 147 MiB embedding swapped
  // while its transpose, nearly free to recompute, stayed). Drops: the
  // heaviest choices (copy seconds of a swap, recompute seconds), each kept
  // or flipped, then refilled. Additions: the largest kept candidates, each
  // evicted, then the choices it makes unnecessary undone.
  void replayed_exchange() {
    const int tries = config_.replayed_exchanges;
    if (n_ > GreedySolver::kAlternativesMaxCandidates || tries <= 0) return;
    std::vector<std::pair<double, std::size_t>> heavy, large;
    for (std::size_t i = 0; i < n_; ++i) {
      const Candidate& c = p_.candidates[i];
      const Decision d = st_.choice()[i];
      if (d == Decision::kKeep)
        large.emplace_back(static_cast<double>(c.bytes), i);
      else
        heavy.emplace_back(
            d == Decision::kSwap ? c.swap_out_seconds + c.swap_in_seconds : c.recompute_seconds, i);
    }
    std::sort(heavy.rbegin(), heavy.rend());
    std::sort(large.rbegin(), large.rend());
    double now = replayed_overhead_seconds(p_, st_.choice());
    for (std::size_t k = 0; k < heavy.size() && k < static_cast<std::size_t>(tries); ++k)
      now = best_replayed_move(heavy[k].second, now);
    for (std::size_t k = 0; k < large.size() && k < static_cast<std::size_t>(tries / 2); ++k)
      if (st_.choice()[large[k].second] == Decision::kKeep)
        now = best_replayed_move(large[k].second, now);
  }

  // Candidate i at each other option in turn, refilled and trimmed; the
  // fitting result with the lowest replayed objective under `now` stays.
  // Returns the replayed objective of the state left.
  double best_replayed_move(std::size_t i, double now) {
    if (options_.interrupted != nullptr && *options_.interrupted) return now;
    const std::vector<Decision> saved = st_.choice();
    std::vector<Decision> best;
    for (Decision d : {Decision::kKeep, Decision::kSwap, Decision::kRecompute}) {
      if (d == saved[i] || (d != Decision::kKeep && !option_ok(i, d))) continue;
      if (move_and_refill(i, d, std::numeric_limits<double>::infinity())) {
        const double t = replayed_overhead_seconds(p_, st_.choice());
        if (t < now - 1e-12) {
          now = t;
          best = st_.choice();
        }
      }
      restore(saved);
    }
    if (!best.empty()) restore(best);
    return now;
  }

  void restore(const std::vector<Decision>& saved) {
    for (std::size_t i = 0; i < n_; ++i)
      if (st_.choice()[i] != saved[i]) st_.set(i, saved[i]);
  }

  // The replay is the model's timeline, not the schedule's: keep the
  // relieved plan only where the simulator agrees it is faster.
  void relieve() {
    const std::vector<Decision> before = st_.choice();
    relieve_link_queues(p_, st_);
    if (!options_.simulate || st_.choice() == before) return;
    const auto relieved = options_.simulate(st_.choice()), plain = options_.simulate(before);
    if (plain && (!relieved || *plain <= *relieved)) restore(before);
  }

  // Undo moves the simulator confirms (the model is an estimate), dearest
  // first, within the config's budget of simulator calls.
  std::vector<Decision> simulated_undo() {
    std::vector<Decision> best = st_.choice();
    if (!options_.simulate || config_.simulate_calls <= 0) return best;
    auto current = options_.simulate(best);
    int calls = 1;
    for (std::size_t i : chosen_by_cost(best)) {
      if (!current || calls >= config_.simulate_calls) break;
      if (options_.interrupted != nullptr && *options_.interrupted) break;
      const Decision was = best[i];
      st_.set(i, Decision::kKeep);
      if (!st_.fits()) {
        st_.set(i, was);
        continue;
      }
      const auto t = options_.simulate(st_.choice());
      ++calls;
      if (t && *t < *current) {
        current = t;
        best = st_.choice();
      } else {
        st_.set(i, was);
      }
    }
    simulated_ = current;
    return best;
  }

  const Problem& p_;
  const GreedySolver::Config& config_;
  const SolverOptions& options_;
  const std::size_t n_;
  GreedyState st_;
  Timeline tl_;
  std::vector<Decision> preferred_;
  std::vector<double> ratio_;
  std::vector<std::size_t> order_;
  double link_price_ = 0;  // start()
  std::optional<IntervalStab> windows_;
  std::optional<double> simulated_;  // simulated_undo()
};

bool any_recomputable(const Problem& p) {
  return std::any_of(p.candidates.begin(), p.candidates.end(),
                     [](const Candidate& c) { return c.can_recompute; });
}

}  // namespace

Solution GreedySolver::solve(const Problem& p, const SolverOptions& options) const {
  const auto start = Clock::now();
  Solution out;
  if (options.simulate && p.candidates.size() <= kAlternativesMaxCandidates)
    keep_the_fastest_run(p, options, out);  // the main run among the others
  else {
    GreedyRun run(p, config_, options);
    out.choice = run.run();
    out.simulated_seconds = run.simulated();
  }
  const ModelEval e = evaluate(p, out.choice);
  out.objective_seconds = replayed_objective(p, out.choice, e).seconds;
  out.status = e.fits ? SolveStatus::kHeuristic : SolveStatus::kInfeasible;
  out.solve_seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return out;
}

namespace {

// One second-opinion run: its problem (a variant of the main one, or that
// one itself), its config and what the note calls it.
struct RunJob {
  std::optional<Problem> own;
  const Problem* problem = nullptr;
  GreedySolver::Config config;
  std::string what;
  std::vector<Decision> choice;
};

// The runs are independent and each is deterministic: they go on as many
// threads as the machine has (synth10k: 8 runs, most of the planning time),
// and the plans are the same as one after the other.
void run_jobs(std::deque<RunJob>& jobs, const SolverOptions& options) {
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    for (std::size_t k = next++; k < jobs.size(); k = next++)
      jobs[k].choice = GreedyRun(*jobs[k].problem, jobs[k].config, options).run();
  };
  const std::size_t threads =
      std::min<std::size_t>(jobs.size(), std::max(1U, std::thread::hardware_concurrency()));
  std::vector<std::jthread> pool;
  for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
}

}  // namespace

// The model prices some plans wrongly: swaps more optimistically than the
// link delivers where copies crowd, and chain holds more pessimistically
// than the scheduler, which can rebuild a held input instead, needs. With a
// simulator, more runs are candidate plans, and the fastest that fits is
// kept: one that recomputes only, one that ignores chain holds, and one
// that prices each shared chain step once per reader (the shared
// intermediate a plan recomputes once is held between its readers, memory
// the model does not count, so the dearer pricing sometimes schedules
// better), and one that leaves the link unpriced (the lowest objective
// after the first fill is not always the lowest after local search).
// The main run is one of the jobs. Above kAlternativesMaxCandidates, solve()
// makes the main run only.
void GreedySolver::keep_the_fastest_run(const Problem& p, const SolverOptions& options,
                                        Solution& out) const {
  Config alt = config_;
  alt.simulate_calls = std::min(config_.simulate_calls, 10);
  std::deque<RunJob> jobs;  // a deque: each job's problem stays put as jobs are added
  jobs.push_back({std::nullopt, &p, config_, "the main run", {}});
  // Each variant as configured and, where its link is priced, unpriced too.
  auto unpriced_too = [&](const Problem* q, const Config& c, const std::string& what) {
    if (!c.price_link) return;
    RunJob& job = jobs.emplace_back();
    job.problem = q;
    job.config = c;
    job.config.price_link = false;
    job.what = what + " with the link unpriced";
  };
  auto variant = [&](Problem q, const Config& c, const std::string& what) {
    RunJob& job = jobs.emplace_back();
    job.own = std::move(q);
    job.problem = &*job.own;
    job.config = c;
    job.what = what;
    unpriced_too(job.problem, c, what);
  };
  unpriced_too(&p, alt, "the run");
  if (any_recomputable(p)) {
    Problem only = p;
    restrict_evictions(only, Evictions::recompute_only());
    Config recompute_only = alt;
    recompute_only.price_link = false;  // no copies on the link to price
    variant(std::move(only), recompute_only, "the recompute-only run");
  }
  if (!p.holds.empty()) {
    Problem unheld = p;
    unheld.holds.clear();
    variant(std::move(unheld), alt, "the run without chain holds");
  }
  if (!p.holds.empty() && !p.holds_cost_time) {
    Problem rebuilt = p;
    rebuilt.holds_cost_time = true;
    variant(std::move(rebuilt), alt, "the run rebuilding recomputed chain inputs");
  }
  if (!p.shared_steps.empty()) {
    Problem unshared = p;
    unshared.shared_steps.clear();
    variant(std::move(unshared), alt, "the run pricing shared chain steps per reader");
  }
  run_jobs(jobs, options);
  out.choice = std::move(jobs.front().choice);
  jobs.pop_front();
  std::optional<double> best = options.simulate(out.choice);
  for (auto& [own, q, config, what, choice] : jobs) {
    if (choice == out.choice) continue;
    const std::optional<double> t = options.simulate(choice);
    if (!t || (best && *t >= *best)) continue;
    best = t;
    if (out.own_choice.empty()) out.own_choice = out.choice;
    out.choice = std::move(choice);
    out.note = what + " simulated fastest";
  }
  out.simulated_seconds = best;
}

}  // namespace memplan::solvers
