// `memplan maxbatch`: the largest batch that fits the device (DELTA's
// headline) and the batch with the most samples/s (ATP's throughput peak).
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/model_inputs.h"
#include "cli/plan_options.h"
#include "ir/baseline_memory.h"
#include "ir/liveness.h"
#include "planner/plan_search.h"
#include "util/errors.h"
#include "util/units.h"

namespace memplan::cli {
namespace {

struct MaxBatchArgs {
  ModelOptions model;
  std::string dim_name = "batch";
  std::string max_overhead = "20%";
  std::string solver = "greedy";
  std::string budget;  // default: the device's memory
  std::int64_t max_batch = 4096;
  bool json = false;
};

struct Row {
  std::int64_t batch = 0;
  std::uint64_t baseline_peak = 0;
  bool fits_without_plan = false;
  bool fits_memory = false;  // without a plan or with one that fits the budget
  bool fits = false;         // and within the overhead limit
  std::uint64_t peak = 0;
  double iteration = 0, baseline_iteration = 0, overhead = 0;
  double samples_per_s = 0;
  double atp_tp = 0;  // ATP's analytic throughput model
};

Row evaluate(const MaxBatchArgs& a, std::int64_t batch, double max_overhead) {
  ModelOptions o = a.model;
  o.dims.erase(
      std::remove_if(o.dims.begin(), o.dims.end(),
                     [&](const std::string& d) { return d.rfind(a.dim_name + "=", 0) == 0; }),
      o.dims.end());
  o.dims.push_back(a.dim_name + "=" + std::to_string(batch));
  ModelInputs in = load_inputs(o);
  const ir::Graph& g = in.model.graph;
  Row r;
  r.batch = batch;
  r.baseline_peak = ir::baseline_memory(g, ir::Liveness(g)).peak_bytes;
  r.baseline_iteration = in.costs.total_seconds();
  const std::uint64_t budget =
      a.budget.empty() ? in.costs.device.memory_bytes : parse_budget(a.budget, r.baseline_peak);
  r.fits_without_plan = r.baseline_peak <= budget;
  r.fits_memory = r.fits_without_plan;
  r.peak = r.baseline_peak;
  r.iteration = r.baseline_iteration;
  double swapped = 0, recompute = 0, fwd = 0, bwd = 0;
  for (ir::NodeId i = 0; i < g.nodes().size(); ++i)
    (g.node(i).is_forward ? fwd : bwd) += in.costs.seconds[i];
  if (!r.fits_without_plan) {
    planner::PlanRequest req;
    req.budget_bytes = budget;
    req.solver = a.solver;
    const IlpLimits limits{10, std::nullopt};
    req.time_limit_seconds = limits.time_limit;
    req.deadline = limits.deadline_from_now();
    planner::PlanOutcome out = planner::search_plan(g, in.costs, req);
    if (!out.fits) return r;
    r.fits_memory = true;
    r.peak = out.plan.predicted.peak_bytes;
    r.iteration = out.plan.predicted.iteration_seconds;
    recompute = out.plan.predicted.compute_seconds - r.baseline_iteration;
    for (ir::TensorId t = 0; t < out.plan.decisions.size(); ++t)
      if (out.plan.decisions[t] == planner::Decision::kSwap)
        swapped += static_cast<double>(g.tensor(t).bytes);
  }
  r.overhead = r.iteration / r.baseline_iteration - 1.0;
  r.fits = r.overhead <= max_overhead + 1e-12;
  r.samples_per_s = static_cast<double>(batch) / r.iteration;
  const double bw = std::min(in.costs.device.h2d_bytes_per_s, in.costs.device.d2h_bytes_per_s);
  const double ms_bw = bw > 0 ? swapped / bw : 0;
  r.atp_tp = static_cast<double>(batch) / (std::max(ms_bw, fwd) + std::max(ms_bw, bwd + recompute));
  return r;
}

// Every batch evaluated, once each: the curve the command reports.
class Curve {
 public:
  Curve(const MaxBatchArgs& a, double max_overhead) : a_(a), max_overhead_(max_overhead) {}
  const Row& at(std::int64_t b) {
    auto it = rows_.find(b);
    if (it == rows_.end()) it = rows_.emplace(b, evaluate(a_, b, max_overhead_)).first;
    return it->second;
  }
  const std::map<std::int64_t, Row>& rows() const { return rows_; }

 private:
  const MaxBatchArgs& a_;
  double max_overhead_;
  std::map<std::int64_t, Row> rows_;
};

// The largest batch in [lo, hi) where `ok` holds, given ok(lo) (or lo 0)
// and not ok(hi), for `ok` monotone in the batch.
template <class Ok>
std::int64_t bisect(std::int64_t lo, std::int64_t hi, Ok ok) {
  while (lo > 0 && hi - lo > 1) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    (ok(mid) ? lo : hi) = mid;
  }
  return lo;
}

struct Answer {
  std::int64_t largest = 0;               // within the overhead limit
  std::int64_t largest_without_plan = 0;  // baseline peak within the budget
  const Row* best_simulated = nullptr;    // most samples/s, simulated, within the limit
  const Row* best_atp = nullptr;          // most samples/s under ATP's model, within the limit
};

// Doubling, then bisection between the last fit and the first miss; then
// the same bisection for the largest batch that needs no plan. Until a
// batch fits within the limit, the doubling goes on past a miss whose plan
// fits the memory: with training state on the host between iterations the
// copies are the same for every batch, so the overhead falls as the batch
// grows (gpt2_xl + AdamW on v100-16gb: 582 % at batch 1, 74 % at 8).
Answer search(const MaxBatchArgs& a, Curve& curve) {
  Answer ans;
  std::int64_t hi = 0;
  for (std::int64_t b = 1; b <= a.max_batch; b *= 2) {
    const Row& r = curve.at(b);
    if (r.fits) {
      ans.largest = b;
      hi = 0;
      continue;
    }
    hi = b;
    if (ans.largest > 0 || !r.fits_memory) break;
  }
  if (hi == 0) hi = a.max_batch + 1;
  ans.largest = bisect(ans.largest, hi, [&](std::int64_t b) { return curve.at(b).fits; });
  std::int64_t lo_np = 0, hi_np = a.max_batch + 1;
  for (const auto& [b, r] : curve.rows()) {
    if (r.fits_without_plan) lo_np = std::max(lo_np, b);
    if (!r.fits_without_plan && b > lo_np) hi_np = std::min(hi_np, b);
  }
  ans.largest_without_plan =
      bisect(lo_np, hi_np, [&](std::int64_t b) { return curve.at(b).fits_without_plan; });
  for (const auto& [b, r] : curve.rows()) {
    if (!r.fits) continue;
    if (ans.best_simulated == nullptr || r.samples_per_s > ans.best_simulated->samples_per_s)
      ans.best_simulated = &r;
    if (ans.best_atp == nullptr || r.atp_tp > ans.best_atp->atp_tp) ans.best_atp = &r;
  }
  return ans;
}

void print_json(const Answer& ans, const Curve& curve, double max_overhead) {
  nlohmann::ordered_json doc;
  doc["max_overhead_percent"] = 100 * max_overhead;
  doc["largest_batch"] = ans.largest;
  doc["largest_batch_without_plan"] = ans.largest_without_plan;
  doc["throughput_batch"] = ans.best_simulated != nullptr ? ans.best_simulated->batch : 0;
  doc["throughput_samples_per_s"] =
      ans.best_simulated != nullptr ? ans.best_simulated->samples_per_s : 0;
  doc["atp_model_batch"] = ans.best_atp != nullptr ? ans.best_atp->batch : 0;
  doc["atp_model_samples_per_s"] = ans.best_atp != nullptr ? ans.best_atp->atp_tp : 0;
  auto& table = doc["table"] = nlohmann::ordered_json::array();
  for (const auto& [b, r] : curve.rows())
    table.push_back({{"batch", b},
                     {"baseline_peak_bytes", r.baseline_peak},
                     {"fits_without_plan", r.fits_without_plan},
                     {"fits_memory", r.fits_memory},
                     {"fits", r.fits},
                     {"peak_bytes", r.peak},
                     {"iteration_seconds", r.iteration},
                     {"overhead_percent", 100 * r.overhead},
                     {"samples_per_s", r.samples_per_s},
                     {"atp_model_samples_per_s", r.atp_tp}});
  std::cout << doc.dump(2) << "\n";
}

void print_text(const Answer& ans, const Curve& curve, double max_overhead) {
  std::printf("%7s %12s %8s %6s %12s %12s %10s %12s %12s\n", "batch", "baseline", "no-plan", "fits",
              "peak", "iteration", "overhead", "samples/s", "ATP TP(B)");
  for (const auto& [b, r] : curve.rows()) {
    const char* fits = r.fits ? "yes" : (r.fits_memory ? "over" : "no");
    std::printf("%7lld %12s %8s %6s %12s %12s %9.2f%% %12.1f %12.1f\n", static_cast<long long>(b),
                util::human_bytes(r.baseline_peak).c_str(), r.fits_without_plan ? "fits" : "-",
                fits, util::human_bytes(r.peak).c_str(),
                r.fits_memory ? util::human_seconds(r.iteration).c_str() : "-", 100 * r.overhead,
                r.samples_per_s, r.atp_tp);
  }
  std::printf("(fits: yes = within the overhead limit, over = fits the memory above it)\n");
  std::printf("\nlargest batch within %.0f%% overhead: %lld (without a plan: %lld)\n",
              100 * max_overhead, static_cast<long long>(ans.largest),
              static_cast<long long>(ans.largest_without_plan));
  if (ans.best_simulated != nullptr)
    std::printf("highest throughput: batch %lld, %.1f samples/s (simulated)\n",
                static_cast<long long>(ans.best_simulated->batch),
                ans.best_simulated->samples_per_s);
  if (ans.best_atp != nullptr)
    std::printf("highest throughput under ATP's model: batch %lld, TP(B) %.1f samples/s\n",
                static_cast<long long>(ans.best_atp->batch), ans.best_atp->atp_tp);
}

void run_maxbatch(const MaxBatchArgs& a) {
  const double max_overhead = parse_fraction(a.max_overhead, "--max-overhead");
  Curve curve(a, max_overhead);
  const Answer ans = search(a, curve);
  if (a.json)
    print_json(ans, curve, max_overhead);
  else
    print_text(ans, curve, max_overhead);
  if (ans.largest == 0 && !a.json)
    throw InfeasibleError("no batch size fits the device within the overhead limit");
}

}  // namespace

void add_maxbatch_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("maxbatch",
                                 "Largest batch that fits, and the batch with the most samples/s");
  auto a = std::make_shared<MaxBatchArgs>();
  a->model.add_to(*cmd);
  cmd->add_option("--dim-name", a->dim_name, "The symbolic dim that is the batch")
      ->capture_default_str();
  cmd->add_option("--max-overhead", a->max_overhead, "Largest iteration-time overhead allowed")
      ->capture_default_str();
  cmd->add_option("--solver", a->solver, "Solver for batches that need a plan")
      ->capture_default_str();
  cmd->add_option("--budget", a->budget, "Memory limit (default: the device's memory)");
  cmd->add_option("--max-batch", a->max_batch, "Stop searching here")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_flag("--json", a->json, "Print the answer and the table as JSON");
  cmd->callback([a] { run_maxbatch(*a); });
}

}  // namespace memplan::cli
