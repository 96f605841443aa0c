#include "solvers/ilp_solver.h"

#include <CbcEventHandler.hpp>
#include <CbcModel.hpp>
#include <CbcSolver.hpp>
#include <CoinPackedMatrix.hpp>
#include <OsiClpSolverInterface.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>

#include "solvers/coarsen.h"
#include "solvers/ilp_model.h"
#include "solvers/model_eval.h"

namespace memplan::solvers {
namespace {

using Clock = std::chrono::steady_clock;

// Prints progress and stops Cbc when asked to.
class Progress final : public CbcEventHandler {
 public:
  Progress(bool print, const volatile bool* interrupted, Clock::time_point start)
      : print_(print), interrupted_(interrupted), start_(start) {}
  CbcEventHandler* clone() const override { return new Progress(*this); }  // Cbc owns clones

  CbcAction event(CbcEvent which) override {
    if (interrupted_ != nullptr && *interrupted_) return stop;
    if (!print_ || model_ == nullptr) return noAction;
    double elapsed = std::chrono::duration<double>(Clock::now() - start_).count();
    bool found = which == solution || which == heuristicSolution;
    if (found || elapsed - last_print_ >= 1.0) {
      last_print_ = elapsed;
      // Objective is in microseconds (see kScale).
      double inc = model_->getObjValue() * 1e-6, bound = model_->getBestPossibleObjValue() * 1e-6;
      bool has = model_->bestSolution() != nullptr;
      if (has) {
        std::fprintf(stderr, "ilp: %6.1fs  incumbent %.6g s  bound %.6g s  gap %.2f%%\n", elapsed, inc, bound,
                     inc > 1e-12 ? 100.0 * (inc - bound) / inc : 0.0);
      } else {
        std::fprintf(stderr, "ilp: %6.1fs  no incumbent yet  bound %.6g s\n", elapsed, bound);
      }
    }
    return noAction;
  }

 private:
  bool print_;
  const volatile bool* interrupted_;
  Clock::time_point start_;
  double last_print_ = -1;
};

}  // namespace

namespace {

Solution solve_exact(const Problem& problem, const SolverOptions& options) {
  const auto start = Clock::now();
  Solution out;
  out.choice.assign(problem.candidates.size(), Decision::kKeep);
  IlpModel m = build_ilp_model(problem);
  auto finish = [&](Solution s) {
    s.solve_seconds = std::chrono::duration<double>(Clock::now() - start).count();
    return s;
  };
  if (m.infeasible) {
    out.status = "infeasible";
    out.note = "step " + std::to_string(m.infeasible_step) + " stays over budget with every candidate evicted";
    return finish(out);
  }
  if (m.memory_rows.empty()) {  // already fits: keeping everything is optimal
    out.status = "optimal";
    out.bound_seconds = 0;
    return finish(out);
  }

  const int n_bin = static_cast<int>(m.columns.size());
  const int col_out = n_bin, col_in = n_bin + 1, n_cols = n_bin + 2;
  // Times in microseconds: Cbc's tolerances are absolute, and overheads of
  // a few hundred microseconds would vanish inside them in seconds.
  constexpr double kScale = 1e6;
  std::vector<double> obj(n_cols, 1.0), lo(n_cols, 0.0), hi(n_cols, 1.0);
  for (int j = 0; j < n_bin; ++j) obj[j] = m.columns[j].cost * kScale;
  hi[col_out] = hi[col_in] = COIN_DBL_MAX;

  CoinPackedMatrix matrix(false, 0, 0);
  matrix.setDimensions(0, n_cols);
  std::vector<double> row_lo, row_hi;
  auto add_row = [&](const std::vector<int>& idx, const std::vector<double>& val, double l, double h) {
    matrix.appendRow(static_cast<int>(idx.size()), idx.data(), val.data());
    row_lo.push_back(l);
    row_hi.push_back(h);
  };
  for (const auto& [a, b] : m.one_choice) add_row({a, b}, {1.0, 1.0}, -COIN_DBL_MAX, 1.0);
  // Link excess: e >= sum(transfer x) - hiding compute time.
  std::vector<int> idx_out{col_out}, idx_in{col_in};
  std::vector<double> val_out{1.0}, val_in{1.0};
  for (int j = 0; j < n_bin; ++j) {
    if (m.columns[j].choice != Decision::kSwap) continue;
    const Candidate& c = problem.candidates[m.columns[j].candidate];
    idx_out.push_back(j);
    val_out.push_back(-c.swap_out_seconds * kScale);
    idx_in.push_back(j);
    val_in.push_back(-c.swap_in_seconds * kScale);
  }
  add_row(idx_out, val_out, -problem.forward_seconds * kScale, COIN_DBL_MAX);
  add_row(idx_in, val_in, -problem.backward_seconds * kScale, COIN_DBL_MAX);
  for (const auto& r : m.memory_rows) add_row(r.columns, r.coefficients, r.lower, COIN_DBL_MAX);

  OsiClpSolverInterface lp;
  lp.loadProblem(matrix, lo.data(), hi.data(), obj.data(), row_lo.data(), row_hi.data());
  for (int j = 0; j < n_bin; ++j) lp.setInteger(j);
  lp.messageHandler()->setLogLevel(0);
  CbcModel model(lp);
  CbcMain0(model);
  model.setLogLevel(0);
  model.messageHandler()->setLogLevel(0);
  model.setRandomSeed(12345);
  Progress progress(options.progress, options.interrupted, start);
  model.passInEventHandler(&progress);

  // Warm start: the given assignment as an incumbent, if it is feasible.
  const bool warm = options.warm_start.size() == problem.candidates.size();
  double warm_obj = 0;
  if (warm) {
    std::vector<double> x(n_cols, 0.0);
    for (int j = 0; j < n_bin; ++j)
      x[j] = options.warm_start[m.columns[j].candidate] == m.columns[j].choice ? 1.0 : 0.0;
    ModelEval e = evaluate(problem, options.warm_start);
    x[col_out] = e.link_out_excess * kScale;
    x[col_in] = e.link_in_excess * kScale;
    warm_obj = e.overhead_seconds * kScale;
    if (e.fits) model.setBestSolution(x.data(), n_cols, warm_obj, true);
  }

  std::string secs = std::to_string(std::max(0.1, options.time_limit_seconds));
  std::string threads = std::to_string(std::max(1, options.threads));
  const char* argv[] = {"memplan-ilp", "-timeMode", "elapsed", "-sec", secs.c_str(), "-threads", threads.c_str(),
                        "-log", "0", "-solve", "-quit"};
  CbcMain1(static_cast<int>(sizeof(argv) / sizeof(argv[0])), argv, model);
  // CbcMain1 installs its own SIGINT handler; an interrupt then shows as
  // secondary status 5 (stopped on ctrl-c) rather than in our flag.
  if (model.secondaryStatus() == 5 && options.interrupted != nullptr) *options.interrupted = true;

  const double* best = model.bestSolution();
  if (best != nullptr) {
    for (int j = 0; j < n_bin; ++j)
      if (best[j] > 0.5) out.choice[m.columns[j].candidate] = m.columns[j].choice;
  } else if (warm) {
    out.choice = options.warm_start;
  }
  ModelEval e = evaluate(problem, out.choice);
  out.objective_seconds = e.overhead_seconds;
  double bound = model.getBestPossibleObjValue() / kScale;
  if (std::isfinite(bound) && bound > -1e20) out.bound_seconds = std::max(0.0, std::min(bound, e.overhead_seconds));
  if (model.isProvenOptimal() && best != nullptr) {
    out.status = "optimal";
    out.bound_seconds = e.overhead_seconds;
  } else if (model.isProvenInfeasible()) {
    out.status = "infeasible";
  } else if (!e.fits) {
    out.status = "infeasible";
    out.note = "no feasible assignment found within the time limit";
  } else {
    out.status = "time_limit";
  }
  out.note += (out.note.empty() ? "" : "; ") + std::to_string(n_bin) + " binaries, " +
              std::to_string(m.memory_rows.size()) + " memory rows, " + std::to_string(m.nonzeros()) +
              " nonzeros";
  return finish(out);
}

}  // namespace

Solution IlpSolver::solve(const Problem& problem, const SolverOptions& options) const {
  std::size_t binaries = 0;
  for (const auto& c : problem.candidates) binaries += (c.can_swap ? 1 : 0) + (c.can_recompute ? 1 : 0);
  if (binaries <= max_binaries_) return solve_exact(problem, options);

  // Too large to solve exactly in time: solve groups, expand, and keep the
  // warm start when it is better. The coarse bound bounds the coarse
  // problem only, so none is reported.
  const auto start = Clock::now();
  Coarsened c = coarsen(problem, max_binaries_ / 2);
  SolverOptions co = options;
  co.warm_start.clear();
  Solution coarse = solve_exact(c.problem, co);
  Solution out;
  out.choice = expand(c, coarse.choice, problem.candidates.size());
  ModelEval e = evaluate(problem, out.choice);
  out.status = e.fits ? "feasible" : "infeasible";
  if (options.warm_start.size() == problem.candidates.size()) {
    ModelEval w = evaluate(problem, options.warm_start);
    if (w.fits && (!e.fits || w.overhead_seconds < e.overhead_seconds)) {
      out.choice = options.warm_start;
      e = w;
      out.status = "feasible";
    }
  }
  out.objective_seconds = e.overhead_seconds;
  out.note = "coarsened: " + std::to_string(c.problem.candidates.size()) + " groups for " +
             std::to_string(problem.candidates.size()) + " candidates (" + std::to_string(binaries) +
             " binaries > " + std::to_string(max_binaries_) + "); coarse run: " + coarse.status + ", " + coarse.note;
  out.solve_seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return out;
}

}  // namespace memplan::solvers
