#include "solvers/ilp_solver.h"

#include <CbcEventHandler.hpp>
#include <CbcModel.hpp>
#include <CbcSolver.hpp>
#include <OsiClpSolverInterface.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <optional>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

#include "solvers/cbc_main.h"
#include "solvers/coarsen.h"
#include "solvers/greedy_solver.h"
#include "solvers/ilp_model.h"
#include "solvers/link_queue.h"
#include "solvers/model_eval.h"
#include "solvers/solution_wire.h"
#include "util/isolated_call.h"

namespace memplan::solvers {
namespace {

using Clock = std::chrono::steady_clock;

// One clock for the whole solve: coarsening, the model, loading it into
// Cbc and the search all count against --time-limit.
struct Deadline {
  Clock::time_point start;
  double limit_seconds;
  double elapsed() const { return std::chrono::duration<double>(Clock::now() - start).count(); }
  double left() const { return limit_seconds - elapsed(); }
};

// Prints progress and stops Cbc when asked to.
class Progress final : public CbcEventHandler {
 public:
  // `out_of_time` tells the caller the stop was ours, not a SIGINT: Cbc
  // reports both as "stopped on event" and works on clones of this object.
  Progress(bool print, const volatile bool* interrupted, const Deadline& deadline,
           bool* out_of_time)
      : print_(print), interrupted_(interrupted), deadline_(deadline), out_of_time_(out_of_time) {}
  CbcEventHandler* clone() const override { return new Progress(*this); }  // Cbc owns clones

  CbcAction event(CbcEvent which) override {
    if (interrupted_ != nullptr && *interrupted_) return stop;
    // Cbc checks its own limit (-sec, what was left when it started) at the
    // same points; this checks ours, whose clock started with the solve.
    double elapsed = deadline_.elapsed();
    if (elapsed >= deadline_.limit_seconds) {
      *out_of_time_ = true;
      return stop;
    }
    if (!print_ || model_ == nullptr) return noAction;
    bool found = which == solution || which == heuristicSolution;
    if (found || elapsed - last_print_ >= 1.0) {
      last_print_ = elapsed;
      // Objective is in microseconds (IlpModel::seconds_scale).
      double inc = model_->getObjValue() * 1e-6, bound = model_->getBestPossibleObjValue() * 1e-6;
      bool has = model_->bestSolution() != nullptr;
      if (has) {
        std::fprintf(stderr, "ilp: %6.1fs  incumbent %.6g s  bound %.6g s  gap %.2f%%\n", elapsed,
                     inc, bound, inc > 1e-12 ? 100.0 * (inc - bound) / inc : 0.0);
      } else {
        std::fprintf(stderr, "ilp: %6.1fs  no incumbent yet  bound %.6g s\n", elapsed, bound);
      }
    }
    return noAction;
  }

 private:
  bool print_;
  const volatile bool* interrupted_;
  Deadline deadline_;
  bool* out_of_time_;
  double last_print_ = -1;
};

// Cbc always gets a positive limit, however little the setup left.
constexpr double kMinCbcSeconds = 0.01;

// Cbc's setup copies the matrix several times and its root LP runs to the
// end whatever the limit (measured: -sec and Clp's own wall limit are both
// ignored until the root is solved), and both grow with the nonzeros: about
// 2 s per 3.5M on a 2-core machine. So the model must be small enough for
// the limit: 1M nonzeros per second of it (half the limit for the setup and
// the root, half for the search), at least 1M (every fixture fits: under
// 0.8M) and at most 4M, as Cbc's preprocessing and root cuts look at the
// clock only between passes, and a pass over 5M took up to 2.5 s.
constexpr double kNonzerosPerSecond = 1e6;
constexpr std::size_t kMinNonzeros = 1'000'000, kMaxNonzeros = 4'000'000;

std::size_t nonzero_budget(double time_limit_seconds) {
  const double n = kNonzerosPerSecond * time_limit_seconds;
  if (!(n > static_cast<double>(kMinNonzeros))) return kMinNonzeros;  // NaN too
  return n < static_cast<double>(kMaxNonzeros) ? static_cast<std::size_t>(n) : kMaxNonzeros;
}

// The answer when the time limit leaves Cbc no (useful) time: the warm start
// if it fits, else the heuristic's assignment. Status time_limit, no bound.
Solution incumbent_only(const Problem& problem, const SolverOptions& options,
                        const std::string& why) {
  Solution out;
  const bool warm = options.warm_start.size() == problem.candidates.size();
  ModelEval e;
  if (warm) {
    out.choice = options.warm_start;
    e = evaluate(problem, out.choice);
  }
  if (!warm || !e.fits) {
    // No simulator hook: its calls would cost far more time than is left.
    Solution g = GreedySolver().solve(problem, {});
    ModelEval ge = evaluate(problem, g.choice);
    if (!warm || ge.fits) {
      out.choice = std::move(g.choice);
      e = ge;
    }
  }
  out.objective_seconds = e.overhead_seconds;
  out.status = e.fits ? SolveStatus::kTimeLimit : SolveStatus::kInfeasible;
  out.note = why + (warm && out.choice == options.warm_start ? "; kept the warm start"
                                                             : "; kept the heuristic's plan");
  return out;
}

// The given assignment as Cbc's incumbent, if it fits: its binaries, link
// excesses and link-cut waits, at its objective.
void set_warm_start(CbcModel& model, const IlpModel& m, const Problem& problem,
                    const std::vector<Decision>& start) {
  const int n_bin = static_cast<int>(m.columns.size());
  const int n_holds = static_cast<int>(m.holds.size());
  const int first_shared = n_bin + 2 + n_holds + static_cast<int>(m.link_cuts.size());
  const int n_cols = first_shared + static_cast<int>(m.shared.size());
  const double scale = m.seconds_scale;
  const ModelEval e = evaluate(problem, start);
  if (!e.fits) return;
  std::vector<double> x(static_cast<std::size_t>(n_cols), 0.0);
  for (int j = 0; j < n_bin; ++j)
    x[j] = start[m.columns[j].candidate] == m.columns[j].choice ? 1.0 : 0.0;
  x[n_bin] = e.link_out_excess * scale;
  x[n_bin + 1] = e.link_in_excess * scale;
  for (int h = 0; h < n_holds; ++h) {
    const IlpHold& z = m.holds[h];
    const double before = z.prev >= 0 ? x[n_bin + 2 + z.prev] : 0.0;
    x[n_bin + 2 + h] = std::max(before, x[z.reader_col] + x[z.input_col] - 1.0);
  }
  double waits = 0;
  for (std::size_t k = 0; k < m.link_cuts.size(); ++k) {
    const double w = m.link_cuts[k].delay(start);
    x[static_cast<std::size_t>(n_bin + 2 + n_holds) + k] = w * scale;
    waits += w;
  }
  for (std::size_t k = 0; k < m.shared.size(); ++k)
    for (int col : m.shared[k].reader_cols)
      x[static_cast<std::size_t>(first_shared) + k] =
          std::max(x[static_cast<std::size_t>(first_shared) + k], x[col]);
  model.setBestSolution(x.data(), n_cols, (e.overhead_seconds + waits) * scale, true);
}

// Cbc's answer as a choice per candidate, its objective (the model's, plus
// the link-cut waits), bound and status.
void read_answer(CbcModel& model, const IlpModel& m, const Problem& problem,
                 std::optional<double> bound, Solution& out) {
  const double* best = model.bestSolution();
  if (best != nullptr) {
    for (std::size_t j = 0; j < m.columns.size(); ++j)
      if (best[j] > 0.5) out.choice[m.columns[j].candidate] = m.columns[j].choice;
  }
  ModelEval e = evaluate(problem, out.choice);
  double waits = 0;
  for (const LinkCut& cut : m.link_cuts) waits += cut.delay(out.choice);
  out.objective_seconds = e.overhead_seconds + waits;
  // Cbc's bound leaves out the constant the objective includes.
  if (bound)
    out.bound_seconds =
        std::max(0.0, std::min(*bound + problem.host_copy_seconds, out.objective_seconds));
  if (model.isProvenOptimal() && best != nullptr) {
    out.status = SolveStatus::kOptimal;
    out.bound_seconds = out.objective_seconds;
  } else if (model.isProvenInfeasible() || !e.fits) {
    out.status = SolveStatus::kInfeasible;
  } else {
    out.status = SolveStatus::kTimeLimit;
  }
}

// A model whose answer needs no search: a step no eviction brings under
// budget (infeasible), or none over it (keep everything, optimal).
bool settled_without_cbc(const Problem& problem, const IlpModel& m, Solution& out) {
  if (m.infeasible) {
    out.status = SolveStatus::kInfeasible;
    out.note = "step " + std::to_string(m.infeasible_step) +
               " stays over budget with every candidate evicted";
    return true;
  }
  if (!m.memory_lower.empty()) return false;
  out.status = SolveStatus::kOptimal;
  // Keeping everything still pays the fixed copies of state on the host.
  out.bound_seconds = problem.host_copy_seconds;
  return true;
}

Solution cbc_solve(const Problem& problem, const IlpModel& m, const SolverOptions& options,
                   const Deadline& deadline, bool preprocess) {
  Solution out;
  out.choice.assign(problem.candidates.size(), Decision::kKeep);
  auto finish = [&](Solution s) {
    s.solve_seconds = deadline.elapsed();
    return s;
  };
  if (settled_without_cbc(problem, m, out)) return finish(out);
  const std::string size = std::to_string(m.columns.size()) + " binaries, " +
                           std::to_string(m.memory_lower.size()) + " memory rows, " +
                           std::to_string(m.nonzeros()) + " nonzeros";
  auto out_of_time = [&](const char* where) {
    return finish(incumbent_only(
        problem, options,
        std::string("time limit reached ") + where + ", before Cbc could search; " + size));
  };
  if (deadline.left() <= 0) return out_of_time("building the model");

  const int n_bin = static_cast<int>(m.columns.size());
  const double kScale = m.seconds_scale;
  OsiClpSolverInterface lp;
  {
    const IlpArrays a = ilp_arrays(m, problem);
    static_assert(sizeof(CoinBigIndex) == sizeof(int), "IlpArrays::starts are ints");
    lp.loadProblem(a.cols, a.rows, a.starts.data(), a.index.data(), a.value.data(),
                   a.col_lower.data(), a.col_upper.data(), a.objective.data(), a.row_lower.data(),
                   a.row_upper.data());
  }
  for (int j = 0; j < n_bin; ++j) lp.setInteger(j);
  lp.messageHandler()->setLogLevel(0);
  CbcModel model(lp);
  CbcMain0(model);
  model.setLogLevel(0);
  model.messageHandler()->setLogLevel(0);
  model.setRandomSeed(12345);
  bool stopped_on_time = false;
  Progress progress(options.progress, options.interrupted, deadline, &stopped_on_time);
  model.passInEventHandler(&progress);

  if (options.warm_start.size() == problem.candidates.size())
    set_warm_start(model, m, problem, options.warm_start);

  // Cbc gets what the setup left of the limit.
  const double left = deadline.left();
  if (left <= 0) return out_of_time("loading the model");
  // Nor with shared chain steps: with their columns and a warm start, Cbc's
  // preprocessing has returned a worse answer as proven optimal (the
  // SmallProblems enumeration test, seed 8); without it the answers on the
  // fixtures were the same, in the same time.
  // Cbc's preprocessing, stopped by the clock, can crash in
  // CglPreProcess::postProcess (seen on gpt2_medium v100 40 % under load, 1
  // run in 3): the caller turns it off for link-cut re-solves. The caller's
  // SIGINT handler comes back, so an interrupt between rounds reaches it.
  CbcRun run;
  run.seconds = std::max(kMinCbcSeconds, left);
  run.threads = std::max(1, options.threads);
  run.preprocess = preprocess && m.shared.empty();
  run_cbc_main(model, run);
  // CbcMain1 installs its own SIGINT handler; an interrupt then shows as
  // secondary status 5 (stopped on event) rather than in our flag.
  if (model.secondaryStatus() == 5 && !stopped_on_time && options.interrupted != nullptr)
    *options.interrupted = true;

  const double* best = model.bestSolution();
  const double bound = model.getBestPossibleObjValue() / kScale;
  const bool has_bound = std::isfinite(bound) && bound > -1e20;
  if (best == nullptr && !model.isProvenInfeasible()) {
    // Stopped before any incumbent (and none was given that fits).
    out = incumbent_only(problem, options, "no incumbent from Cbc within the time limit");
    out.note += "; " + size;
    if (out.status != SolveStatus::kInfeasible && has_bound)
      out.bound_seconds =
          std::max(0.0, std::min(bound + problem.host_copy_seconds, out.objective_seconds));
    return finish(out);
  }
  read_answer(model, m, problem, has_bound ? std::optional<double>(bound) : std::nullopt, out);
  out.note = size;
  return finish(out);
}

// How an isolated Cbc run failed, for the note.
std::string cbc_failure(const util::IsolatedOutcome& o) {
  using Kind = util::IsolatedOutcome::Kind;
  switch (o.kind) {
    case Kind::kSignaled:
      return "crashed (" + util::signal_name(o.signal) + ")";
    case Kind::kTimedOut:
      return "ran past its time limit and was stopped";
    case Kind::kExited:
      return "exited (" + std::to_string(o.exit_status) + ") without an answer";
    default:
      return "sent an answer that could not be read";
  }
}

// Cbc and Clp abort on assertions inside them (Clp's `fabs(lower[iSequence])
// < 1.0e30` in updateDualsInDual: resnet_tiny's recompute-only ILP at 40 %,
// the default `plan` included, died with SIGABRT) and their preprocessing
// has crashed when stopped by the clock. So Cbc runs in a forked child
// (util/isolated_call.h); a child that crashes, hangs past its limit or
// sends nothing whole leaves the warm start (or the heuristic's plan) as
// the answer, and the note says why. MEMPLAN_INPROCESS_CBC=1 runs it here
// (for a debugger).
Solution solve_exact(const Problem& problem, const IlpModel& m, const SolverOptions& options,
                     const Deadline& deadline, bool preprocess = true) {
  if (util::run_in_process_requested("MEMPLAN_INPROCESS_CBC"))
    return cbc_solve(problem, m, options, deadline, preprocess);
  const double limit = std::max(kMinCbcSeconds, deadline.left());
  const auto timeout = std::chrono::milliseconds(static_cast<std::int64_t>((2 * limit + 30) * 1e3));
  util::IsolatedOutcome outcome;
  try {
    outcome = util::run_isolated(
        [&] {
          WireSolution w{cbc_solve(problem, m, options, deadline, preprocess), false};
          w.interrupted = options.interrupted != nullptr && *options.interrupted;
          return encode_solution(w);
        },
        timeout, {}, [&] { return options.interrupted != nullptr && *options.interrupted; });
  } catch (const std::system_error& e) {
    Solution here = cbc_solve(problem, m, options, deadline, preprocess);
    here.note += std::string("; Cbc ran in-process: no child could be started (") + e.what() + ")";
    return here;
  }
  if (outcome.kind == util::IsolatedOutcome::Kind::kThrew)
    throw std::runtime_error(outcome.payload);
  if (outcome.kind == util::IsolatedOutcome::Kind::kOk) {
    if (auto w = decode_solution(outcome.payload);
        w && w->solution.choice.size() == problem.candidates.size()) {
      if (w->interrupted && options.interrupted != nullptr) *options.interrupted = true;
      return std::move(w->solution);
    }
  }
  // The child's own last words (an assertion) went to stderr: say what came of them.
  std::cerr << "memplan: warning: the ILP's Cbc run " << cbc_failure(outcome)
            << "; that solve keeps the warm start or the heuristic's plan\n";
  Solution out = incumbent_only(problem, options, "Cbc " + cbc_failure(outcome));
  if (out.status == SolveStatus::kTimeLimit) out.status = SolveStatus::kFeasible;
  out.solve_seconds = deadline.elapsed();
  return out;
}

// Solves, replays the answer's copies through the link queues, adds a cut
// for each late copy and solves again (warm-started from the last answer)
// until the replay finds no copy later than the cuts already charge, or
// the rounds or the time run out. Cuts only ever add rows, so each round's
// answer is feasible for the next.
Solution solve_with_link_cuts(const Problem& problem, IlpModel& m, const SolverOptions& options,
                              const Deadline& deadline) {
  constexpr int kMaxRounds = 8;
  const LinkCopies copies = link_copies(problem);
  const double tolerance = std::max(1e-6, 1e-4 * problem.baseline_seconds);
  SolverOptions round_options = options;
  Solution out;
  int rounds = 0;
  for (; rounds < kMaxRounds; ++rounds) {
    // Each round gets half of what is left, the last all of it: a first
    // round that spent the whole limit would leave no time to act on its cuts.
    const double share = rounds + 1 < kMaxRounds ? 0.5 * deadline.left() : deadline.left();
    // A round stopped by its clock inside Cbc's preprocessing can crash Cbc
    // (CglPreProcess::postProcess, seen under ASan): later rounds only when
    // they get a useful share.
    if (rounds > 0 && share < std::max(1.0, 0.1 * deadline.limit_seconds)) break;
    const Deadline round_deadline{Clock::now(), share};
    out = solve_exact(problem, m, round_options, round_deadline, rounds == 0);
    if (out.status == SolveStatus::kInfeasible || deadline.left() <= 0.05 * deadline.limit_seconds)
      break;
    if (options.interrupted != nullptr && *options.interrupted) break;  // SIGINT: the answer so far
    // The cuts' windows are the model's, valid for every assignment and so
    // wider in blame than the schedule: only an answer whose replay as the
    // scheduler runs it stalls gets more of them.
    if (replayed_link_stall(problem, out.choice) <= tolerance) break;
    std::size_t added = 0;
    for (LinkCut& cut : late_copy_cuts(copies, out.choice, tolerance)) {
      // A cut on the same copy that already charges this much adds nothing.
      const bool known =
          std::any_of(m.link_cuts.begin(), m.link_cuts.end(), [&](const LinkCut& have) {
            return have.to_device == cut.to_device && have.last == cut.last &&
                   have.delay(out.choice) + tolerance >= cut.delay(out.choice);
          });
      if (known) continue;
      m.link_cuts.push_back(std::move(cut));
      ++added;
    }
    if (added == 0) break;
    round_options.warm_start = out.choice;
  }
  if (!m.link_cuts.empty())
    out.note += "; " + std::to_string(m.link_cuts.size()) + " link-queue cuts in " +
                std::to_string(rounds + 1) + " rounds, replayed link stall " +
                std::to_string(replayed_link_stall(problem, out.choice) * 1e3) + " ms";
  out.solve_seconds = deadline.elapsed();
  return out;
}

// The safety net: the model, cuts and all, still only estimates the
// schedule (docs/model.md). Where the caller can simulate, an answer whose
// schedule is slower than the warm start's gives way to the warm start, and
// says so; the bound stays a bound on the model.
Solution keep_the_faster(const Problem& problem, Solution s, const SolverOptions& options) {
  if (!options.simulate || options.warm_start.size() != problem.candidates.size() ||
      s.choice == options.warm_start || s.status == SolveStatus::kInfeasible)
    return s;
  const auto ilp = options.simulate(s.choice), warm = options.simulate(options.warm_start);
  if (!warm || (ilp && *ilp <= *warm)) return s;
  const ModelEval e = evaluate(problem, options.warm_start);
  if (!e.fits) return s;
  s.note += "; kept the warm start: the ILP's answer " +
            (ilp ? "simulates " + std::to_string((*ilp - *warm) * 1e3) + " ms slower"
                 : std::string("does not schedule within budget"));
  s.choice = options.warm_start;  // its objective: reported() replays the link
  if (s.status == SolveStatus::kOptimal) s.status = SolveStatus::kFeasible;
  return s;
}

// The ILP optimises its model, link-cut waits and all; the objective it
// reports is the one every solver reports (link_queue.h), with the bound
// still the ILP's and no higher than it.
Solution reported(const Problem& problem, Solution s) {
  if (s.status == SolveStatus::kInfeasible) return s;
  s.objective_seconds = replayed_overhead_seconds(problem, s.choice);
  if (s.bound_seconds) s.bound_seconds = std::min(*s.bound_seconds, s.objective_seconds);
  return s;
}

// Groups for a model of `nonzeros` to shrink to `max_nonzeros`: both its
// rows and its columns grow with the groups, so the nonzeros about squarely.
std::size_t fewer_groups_for(std::size_t groups, std::size_t nonzeros, std::size_t max_nonzeros) {
  double f = 0.9 * std::sqrt(static_cast<double>(max_nonzeros) / static_cast<double>(nonzeros));
  return std::max<std::size_t>(
      1, std::min(groups - 1, static_cast<std::size_t>(f * static_cast<double>(groups))));
}

// Too large to solve exactly in time: the ILP on groups of candidates
// (`groups` to start from, `why` for the note), expanded.
Solution solve_coarsened(const Problem& problem, const SolverOptions& options,
                         const Deadline& deadline, std::size_t groups, const std::string& why) {
  const std::size_t max_nonzeros = nonzero_budget(options.time_limit_seconds);
  auto fewer_groups = [&](std::size_t g, std::size_t nonzeros) {
    return fewer_groups_for(g, nonzeros, max_nonzeros);
  };
  // Too large to solve exactly in time: solve groups, expand, and keep the
  // warm start when it is better. The coarse bound bounds the coarse
  // problem only, so none is reported. Coarse plans can be much worse than
  // the heuristic's (groups free only where all members do), so without a
  // warm start the heuristic's plan on the whole problem stands in for one.
  const bool warm = options.warm_start.size() == problem.candidates.size();
  const std::vector<Decision> fine_start =
      warm ? options.warm_start : GreedySolver().solve(problem, {}).choice;
  Coarsened c = coarsen(problem, groups);
  IlpModel cm = build_ilp_model(c.problem);
  // Fewer groups usually mean fewer nonzeros, but not always (the runs are
  // cut anew for each group size), and runs of candidates with different
  // options never merge: keep the smallest model seen, a few tries each
  // way, mixing options only when plain runs cannot get small enough.
  for (bool mix : {false, true}) {
    for (int tries = 0; cm.nonzeros() > max_nonzeros && groups > 1 && tries < 16; ++tries) {
      groups = fewer_groups(groups, cm.nonzeros());
      Coarsened fewer = coarsen(problem, groups, mix);
      IlpModel fewer_model = build_ilp_model(fewer.problem);
      if (fewer_model.nonzeros() < cm.nonzeros()) {
        c = std::move(fewer);
        cm = std::move(fewer_model);
      }
    }
    if (cm.nonzeros() <= max_nonzeros) break;
    groups = c.problem.candidates.size();
  }
  // The heuristic on the (small) coarse problem gives Cbc an incumbent from
  // the start, and the answer should Cbc have no time at all.
  SolverOptions co = options;
  co.warm_start = GreedySolver().solve(c.problem, {}).choice;
  Solution coarse;
  if (cm.nonzeros() <= max_nonzeros || cm.infeasible) {
    coarse = solve_exact(c.problem, cm, co, deadline);
  } else {
    coarse.choice = co.warm_start;
    coarse.status = evaluate(c.problem, coarse.choice).fits ? SolveStatus::kTimeLimit
                                                            : SolveStatus::kInfeasible;
    coarse.note = "no Cbc: even the coarsest model has " + std::to_string(cm.nonzeros()) +
                  " nonzeros, over the " + std::to_string(max_nonzeros) +
                  " the time limit allows; kept the heuristic's plan";
  }
  Solution out;
  out.choice = expand(c, coarse.choice, problem.candidates.size());
  ModelEval e = evaluate(problem, out.choice);
  std::string kept;
  if (ModelEval w = evaluate(problem, fine_start);
      w.fits && (!e.fits || w.overhead_seconds < e.overhead_seconds)) {
    out.choice = fine_start;
    e = w;
    kept = warm ? "; kept the warm start" : "; kept the heuristic's plan";
  }
  out.status = !e.fits                                    ? SolveStatus::kInfeasible
               : coarse.status == SolveStatus::kTimeLimit ? SolveStatus::kTimeLimit
                                                          : SolveStatus::kFeasible;
  out.objective_seconds = e.overhead_seconds;
  out.note = "coarsened: " + std::to_string(c.problem.candidates.size()) + " groups for " +
             std::to_string(problem.candidates.size()) + " candidates (" + why +
             "); coarse run: " + std::string(to_string(coarse.status)) + ", " + coarse.note + kept;
  out.solve_seconds = deadline.elapsed();
  return out;
}

}  // namespace

Solution IlpSolver::solve(const Problem& problem, const SolverOptions& search_options) const {
  SolverOptions options = search_options;
  options.time_limit_seconds = seconds_allowed(search_options);
  if (options.time_limit_seconds <= 0)
    return reported(problem, incumbent_only(problem, options, "the search's time limit was spent"));
  const Deadline deadline{Clock::now(), options.time_limit_seconds};
  const std::size_t max_nonzeros = nonzero_budget(options.time_limit_seconds);
  std::size_t binaries = 0;
  for (const auto& c : problem.candidates)
    binaries += (c.can_swap ? 1 : 0) + (c.can_recompute ? 1 : 0);
  std::size_t groups = max_binaries_ / 2;
  std::string why = std::to_string(binaries) + " binaries > " + std::to_string(max_binaries_);
  if (binaries <= max_binaries_) {
    IlpModel m = build_ilp_model(problem);
    if (m.nonzeros() <= max_nonzeros || m.infeasible || m.memory_lower.empty()) {
      // Without a warm start, the heuristic's plan is one: Cbc starts from
      // an incumbent, and the cut rounds from a plan that already avoids
      // the worst queueing.
      SolverOptions warm = options;
      if (warm.warm_start.size() != problem.candidates.size())
        warm.warm_start = GreedySolver().solve(problem, options).choice;
      return reported(
          problem,
          keep_the_faster(problem, solve_with_link_cuts(problem, m, warm, deadline), warm));
    }
    groups = fewer_groups_for(problem.candidates.size(), m.nonzeros(), max_nonzeros);
    why = std::to_string(m.nonzeros()) + " nonzeros > " + std::to_string(max_nonzeros);
  }

  return reported(problem, solve_coarsened(problem, options, deadline, groups, why));
}

}  // namespace memplan::solvers
