#include "solvers/remat_milp.h"

#include <CbcModel.hpp>
#include <CbcSolver.hpp>
#include <CoinPackedMatrix.hpp>
#include <OsiClpSolverInterface.hpp>
#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "solvers/cbc_main.h"

namespace memplan::solvers {
namespace {

// Values up to this many units keep Cbc's tolerances (1e-6 relative to
// coefficients near 1) exact to the byte.
constexpr double kMaxUnits = 1e5;

// Bytes in a unit that keeps the memory rows exact: their gcd, or, where
// that leaves too many units, a coarser one with bytes rounded up and the
// budget down, so any schedule the MILP takes is valid.
struct Units {
  std::vector<double> bytes;  // per node
  double cap = 0;             // the budget less the base
  bool rounded = false;
};

Units units(const RematProblem& p) {
  std::uint64_t g = 0, biggest = 1;
  for (const RematNode& n : p.nodes) {
    g = std::gcd(g, n.bytes);
    biggest = std::max(biggest, n.bytes);
  }
  std::uint64_t unit = std::max<std::uint64_t>(g, 1);
  Units u;
  if (static_cast<double>(biggest / unit) > kMaxUnits) {
    unit = static_cast<std::uint64_t>(std::ceil(static_cast<double>(biggest) / kMaxUnits));
    u.rounded = true;
  }
  for (const RematNode& n : p.nodes)
    u.bytes.push_back(static_cast<double>((n.bytes + unit - 1) / unit));
  const std::uint64_t room = p.budget_bytes - p.base_bytes;
  u.cap = static_cast<double>(room / unit);
  u.rounded = u.rounded || room % unit != 0;
  return u;
}

// A MILP in triplets, loaded into Clp at once.
struct Lp {
  std::vector<double> lo, hi, obj;
  std::vector<int> integer, row_of, col_of;
  std::vector<double> value, row_lo, row_hi;

  int col(double l, double h, double o, bool is_integer) {
    lo.push_back(l);
    hi.push_back(h);
    obj.push_back(o);
    if (is_integer) integer.push_back(static_cast<int>(lo.size()) - 1);
    return static_cast<int>(lo.size()) - 1;
  }
  void row(const std::vector<std::pair<int, double>>& terms, double l, double h) {
    const int r = static_cast<int>(row_lo.size());
    for (const auto& [c, v] : terms) {
      row_of.push_back(r);
      col_of.push_back(c);
      value.push_back(v);
    }
    row_lo.push_back(l);
    row_hi.push_back(h);
  }
};

constexpr double kInf = 1e30;

// The columns of Checkmate's formulation for n nodes, by (stage, node).
class Formulation {
 public:
  Formulation(const RematProblem& p, const Units& u) : p_(p), u_(u), n_(p.nodes.size()) {
    users_.resize(n_);
    for (std::size_t k = 0; k < n_; ++k)
      for (std::size_t i : p.nodes[k].inputs) users_[i].push_back(k);
    add_columns();
    add_rows();
  }
  const Lp& lp() const { return lp_; }
  int r(std::size_t t, std::size_t i) const { return r_[t][i]; }
  double second() const { return second_; }  // the objective's unit

  // Every column's value for `runs` (RematMilpOptions::warm_start), with
  // the eager frees; nullopt where the runs do not fit the formulation.
  std::optional<std::vector<double>> assignment(std::span<const std::size_t> runs) const {
    std::vector<std::vector<std::size_t>> stages;
    if (!staged(runs, stages)) return std::nullopt;
    const auto free_after = eager_frees(p_, runs);
    std::vector<double> x(lp_.lo.size(), 0.0);
    std::vector<char> resident(n_, 0);
    std::size_t p = 0;  // index into runs
    for (std::size_t t = 0; t < n_; ++t) {
      for (std::size_t i = 0; i < t; ++i) x[s_[t][i]] = resident[i];
      double u = 0;
      for (std::size_t i = 0; i < t; ++i) u += resident[i] ? u_.bytes[i] : 0;
      std::size_t next = 0;  // into stages[t]
      for (std::size_t k = 0; k <= t; ++k) {
        const bool runs_k = next < stages[t].size() && stages[t][next] == k;
        if (runs_k) {
          x[r_[t][k]] = 1;
          resident[k] = 1;
          u += u_.bytes[k];
        }
        x[u_col_[t][k]] = u;
        if (u > u_.cap) return std::nullopt;
        if (!runs_k) continue;
        ++next;
        const auto vals = freeable(k);
        for (std::size_t i : free_after[p++]) {
          const auto at = std::find(vals.begin(), vals.end(), i) - vals.begin();
          x[free_[t][k][static_cast<std::size_t>(at)]] = 1;
          resident[i] = 0;
          u -= u_.bytes[i];
        }
      }
    }
    return x;
  }

 private:
  // The values node k may free after it runs: its inputs and its own.
  std::vector<std::size_t> freeable(std::size_t k) const {
    std::vector<std::size_t> v = p_.nodes[k].inputs;
    v.push_back(k);
    return v;
  }

  void add_columns() {
    second_ = std::max(1e-30, max_seconds());
    r_.resize(n_);
    s_.resize(n_);
    free_.resize(n_);
    u_col_.resize(n_);
    for (std::size_t t = 0; t < n_; ++t) {
      for (std::size_t i = 0; i <= t; ++i)
        r_[t].push_back(lp_.col(i == t ? 1 : 0, i == t || p_.nodes[i].recomputable ? 1 : 0,
                                p_.nodes[i].seconds / second_, true));
      for (std::size_t i = 0; i < t; ++i)
        s_[t].push_back(lp_.col(p_.nodes[i].output ? 1 : 0, 1, 0, true));
      free_[t].resize(t + 1);
      for (std::size_t k = 0; k <= t; ++k) {
        for (std::size_t i : freeable(k))
          free_[t][k].push_back(p_.nodes[i].output ? -1 : lp_.col(0, 1, 0, true));
        u_col_[t].push_back(lp_.col(0, u_.cap, 0, false));
      }
    }
  }

  // The runs of each stage, or false where they cannot be staged: stage
  // t ends with node t's first run and runs each earlier node at most
  // once, in node order, recomputable and not an output.
  bool staged(std::span<const std::size_t> runs,
              std::vector<std::vector<std::size_t>>& stages) const {
    stages.assign(n_, {});
    std::size_t t = 0;
    for (std::size_t v : runs) {
      if (t == n_ || v > t) return false;
      std::vector<std::size_t>& st = stages[t];
      if (!st.empty() && st.back() >= v) return false;
      if (v < t && (!p_.nodes[v].recomputable || p_.nodes[v].output)) return false;
      st.push_back(v);
      if (v == t) ++t;
    }
    return t == n_;
  }

  double max_seconds() const {
    double m = 0;
    for (const RematNode& n : p_.nodes) m = std::max(m, n.seconds);
    return m;
  }

  void add_rows() {
    for (std::size_t t = 0; t < n_; ++t) {
      for (std::size_t k = 0; k <= t; ++k)
        for (std::size_t j : p_.nodes[k].inputs)
          lp_.row({{r_[t][k], 1}, {r_[t][j], -1}, {s_[t][j], -1}}, -kInf, 0);
      for (std::size_t i = 0; i < t; ++i) lp_.row({{r_[t][i], 1}, {s_[t][i], 1}}, -kInf, 1);
      if (t + 1 < n_)
        for (std::size_t i = 0; i <= t; ++i) {
          std::vector<std::pair<int, double>> keep{{s_[t + 1][i], 1}, {r_[t][i], -1}};
          if (i < t) keep.emplace_back(s_[t][i], -1);
          lp_.row(keep, -kInf, 0);
        }
      add_free_rows(t);
      add_memory_rows(t);
    }
  }

  // FREE[t][i][k] only where node k runs, value i is not kept for the next
  // stage and no later node of the stage reads it. Freeing pays in memory,
  // so the solver sets it wherever these allow: upper bounds suffice.
  void add_free_rows(std::size_t t) {
    for (std::size_t k = 0; k <= t; ++k) {
      const auto vals = freeable(k);
      for (std::size_t a = 0; a < vals.size(); ++a) {
        const int f = free_[t][k][a];
        if (f < 0) continue;
        const std::size_t i = vals[a];
        lp_.row({{f, 1}, {r_[t][k], -1}}, -kInf, 0);
        if (t + 1 < n_) lp_.row({{f, 1}, {s_[t + 1][i], 1}}, -kInf, 1);
        for (std::size_t j : users_[i])
          if (j > k && j <= t) lp_.row({{f, 1}, {r_[t][j], 1}}, -kInf, 1);
      }
    }
  }

  // U[t][0] = resident at the stage's start + node 0's value if it runs;
  // U[t][k] = U[t][k-1] - what node k-1 freed + node k's value if it runs.
  void add_memory_rows(std::size_t t) {
    for (std::size_t k = 0; k <= t; ++k) {
      std::vector<std::pair<int, double>> terms{{u_col_[t][k], 1}, {r_[t][k], -u_.bytes[k]}};
      if (k == 0) {
        for (std::size_t i = 0; i < t; ++i) terms.emplace_back(s_[t][i], -u_.bytes[i]);
      } else {
        terms.emplace_back(u_col_[t][k - 1], -1);
        const auto vals = freeable(k - 1);
        for (std::size_t a = 0; a < vals.size(); ++a)
          if (free_[t][k - 1][a] >= 0) terms.emplace_back(free_[t][k - 1][a], u_.bytes[vals[a]]);
      }
      lp_.row(terms, 0, 0);
    }
  }

  const RematProblem& p_;
  const Units& u_;
  std::size_t n_;
  double second_ = 1;
  std::vector<std::vector<std::size_t>> users_;
  std::vector<std::vector<int>> r_, s_, u_col_;
  std::vector<std::vector<std::vector<int>>> free_;  // -1: an output, never freed
  Lp lp_;
};

}  // namespace

RematSchedule solve_remat_milp(const RematProblem& problem, const RematMilpOptions& options) {
  RematSchedule out;
  const std::size_t n = problem.nodes.size();
  if (problem.budget_bytes < problem.base_bytes) {
    out.status = SolveStatus::kInfeasible;
    return out;
  }
  const Units u = units(problem);
  out.rounded = u.rounded;
  const Formulation f(problem, u);
  const Lp& lp = f.lp();
  const CoinPackedMatrix matrix(false, lp.row_of.data(), lp.col_of.data(), lp.value.data(),
                                static_cast<CoinBigIndex>(lp.value.size()));
  OsiClpSolverInterface solver;
  solver.loadProblem(matrix, lp.lo.data(), lp.hi.data(), lp.obj.data(), lp.row_lo.data(),
                     lp.row_hi.data());
  for (int c : lp.integer) solver.setInteger(c);
  solver.messageHandler()->setLogLevel(0);
  // Cbc's clock stops its search, not Clp's simplex at the root.
  solver.getModelPtr()->setMaximumWallSeconds(std::max(0.01, options.time_limit_seconds));
  CbcModel model(solver);
  CbcMain0(model);
  model.setLogLevel(0);
  model.messageHandler()->setLogLevel(0);
  if (!options.warm_start.empty()) {
    if (const auto x = f.assignment(options.warm_start)) {
      double objective = 0;
      for (std::size_t c = 0; c < x->size(); ++c) objective += (*x)[c] * lp.obj[c];
      model.setBestSolution(x->data(), static_cast<int>(x->size()), objective, true);
      out.warm_started = model.bestSolution() != nullptr;
    }
  }
  CbcRun run;
  run.seconds = std::max(0.01, options.time_limit_seconds);
  run.threads = std::max(1, options.threads);
  run.preprocess = options.preprocess;
  run.cuts_at_root_only = true;
  run.max_nodes = options.max_branch_nodes;
  run_cbc_main(model, run);
  const double* x = model.bestSolution();
  if (x != nullptr)
    for (std::size_t t = 0; t < n; ++t)
      for (std::size_t i = 0; i <= t; ++i)
        if (x[f.r(t, i)] > 0.5) {
          out.runs.push_back(i);
          out.seconds += problem.nodes[i].seconds;
        }
  if (model.isProvenOptimal() && x != nullptr) {
    out.status = SolveStatus::kOptimal;
    out.bound_seconds = out.seconds;
  } else if (x == nullptr && model.isProvenInfeasible()) {
    out.status = SolveStatus::kInfeasible;
  } else {
    out.status = SolveStatus::kTimeLimit;
    const double bound = model.getBestPossibleObjValue() * f.second();
    if (std::isfinite(bound) && bound > 0) out.bound_seconds = std::min(bound, out.seconds);
  }
  return out;
}

}  // namespace memplan::solvers
