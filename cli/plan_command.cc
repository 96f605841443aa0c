// `memplan plan`: budget in, validated plan.json + report.md (+ trace, plot) out.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <future>
#include <iomanip>
#include <iostream>
#include <memory>
#include <mutex>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "cli/commands.h"
#include "cli/model_inputs.h"
#include "cli/plan_file.h"
#include "cli/plan_options.h"
#include "ir/baseline_memory.h"
#include "ir/liveness.h"
#include "passes/rewrite_file.h"
#include "planner/layout_fit.h"
#include "planner/memory_layout.h"
#include "planner/plan_json.h"
#include "planner/plan_search.h"
#include "planner/simulator.h"
#include "report/chrome_trace.h"
#include "report/memory_plot_svg.h"
#include "report/plan_report.h"
#include "util/errors.h"
#include "util/text_file.h"
#include "util/units.h"

namespace memplan::cli {
namespace {

volatile bool g_interrupted = false;
extern "C" void on_sigint(int) { g_interrupted = true; }

struct PlanArgs {
  ModelOptions model;
  std::string budget;
  std::string solver = "auto";
  std::string allow = "swap,recompute";
  bool keep_state = false;
  std::string state_on_host = "auto";
  std::string out_dir = "out";
  IlpLimits ilp;
  int threads = 1;
  std::string max_overhead;
  bool fail_over_budget = false;
  bool progress = false;
  bool quiet = false;
  bool reproducible = false;
  bool no_rewrite = false;
  bool timings = false;
  std::string outputs = std::string(kDefaultOutputs);
  static constexpr std::string_view kDefaultOutputs = "plan,report,trace,svg,model";
};

PlanOutputs outputs_of(const PlanArgs& a) {
  PlanOutputs o = parse_outputs(a.outputs);
  if (a.no_rewrite) o.model = false;
  if (!(o.plan || o.simulated() || o.model))
    throw UsageError("--no-rewrite: --outputs names only the model");
  return o;
}

// The files `o` asks for, in `dir`; returns their paths. Two lanes side by
// side: the rewritten model, and plan.json then the report, trace and plot.
// The rewrite carries plan.json's sha256 and asks for it last (synth100k:
// the model alone takes 1.5 s, plan.json 0.5 s, the other three 0.7 s).
// Where lanes fail, the first failure in the order plan, report, trace,
// svg, model is what the command reports.
std::vector<std::string> write_outputs(const ModelInputs& in, planner::PlanOutcome& out,
                                       const PlanOutputs& o, const std::string& dir,
                                       StageTimer& timer) {
  const ir::Graph& g = in.model.graph;
  std::mutex timer_mutex;
  auto write = [&](bool wanted, const std::string& file, auto&& f) {
    if (!wanted) return;
    const auto start = std::chrono::steady_clock::now();
    f();
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const std::lock_guard lock(timer_mutex);
    timer.add("write_" + file, seconds);
  };
  std::optional<planner::SimResult> sim;
  if (o.simulated())
    timer.time("simulate", "the plan's timeline, for report, trace and svg",
               [&] { sim = planner::simulate(g, out.plan); });
  std::promise<std::string> plan_written;
  std::shared_future<std::string> plan_sha256 = plan_written.get_future().share();
  auto reports = std::async(std::launch::async, [&] {
    bool sent = false;
    try {
      write(o.plan, "plan.json", [&] {
        plan_written.set_value(write_plan(in.model, out.plan, dir + "plan.json"));
        sent = true;
      });
    } catch (...) {
      if (!sent) plan_written.set_exception(std::current_exception());
      throw;
    }
    write(o.report, "report.md", [&] {
      util::write_file_atomically(
          dir + "report.md",
          report::plan_report_markdown(g, out.plan, *sim, {out.solver_used, out.note, out.rounds}));
    });
    write(o.trace, "trace.json",
          [&] { report::write_chrome_trace(g, out.plan, *sim, dir + "trace.json"); });
    write(o.svg, "memory.svg",
          [&] { report::write_memory_plot_svg(g, out.plan, *sim, dir + "memory.svg"); });
  });
  std::exception_ptr model_failed;
  try {
    passes::RewriteOptions rewrite;  // without plan.json, the rewrite hashes the plan itself
    if (o.plan) rewrite.plan_sha256_later = [&] { return plan_sha256.get(); };
    write(o.model, "model.memplan.onnx", [&] {
      passes::write_rewritten_model(in.model.proto, g, out.plan, rewrite,
                                    dir + "model.memplan.onnx");
    });
  } catch (...) {
    model_failed = std::current_exception();
  }
  reports.get();  // rethrows the plan or report lane's failure, which comes first
  if (model_failed) std::rethrow_exception(model_failed);
  std::vector<std::string> wrote;
  for (const auto& [wanted, file] :
       {std::pair{o.plan, "plan.json"}, std::pair{o.report, "report.md"},
        std::pair{o.trace, "trace.json"}, std::pair{o.svg, "memory.svg"},
        std::pair{o.model, "model.memplan.onnx"}})
    if (wanted) wrote.push_back(dir + file);
  return wrote;
}

void print_layout(const planner::LayoutFitOutcome& fit, std::uint64_t budget, std::ostream& out) {
  const planner::MemoryLayout& m = *fit.outcome.plan.memory_layout;
  char frag[32];
  std::snprintf(frag, sizeof frag, "%.4f", m.fragmentation());
  out << "layout: arena " << util::human_bytes(m.arena_bytes) << " (" << m.arena_bytes
      << " B) of budget " << util::human_bytes(budget) << ", fragmentation " << frag << " ("
      << util::human_bytes(m.arena_bytes - std::min(m.arena_bytes, m.peak_bytes))
      << " over the peak)";
  if (fit.replans > 0)
    out << "; the first plan's arena was " << util::human_bytes(fit.first_arena_bytes) << ", "
        << fit.replans << " replan(s), kept the one for "
        << util::human_bytes(fit.planning_budget_bytes);
  out << "\n";
}

// PLAN_FORMAT: a layout over the budget is not a plan for it, so the budget
// cannot be met, as when the peak does not fit (exit 3, or 5 with
// --fail-over-budget), in the same words scripts parse. The plan is written
// all the same (fits_budget false in its memory_layout) to be looked at;
// validate refuses it.
Error layout_over_budget(const planner::LayoutFitOutcome& fit, std::uint64_t budget,
                         std::uint64_t reachable, const std::string& dir, bool fail_over_budget) {
  const planner::MemoryLayout& m = *fit.outcome.plan.memory_layout;
  const std::string msg =
      "budget " + util::human_bytes(budget) + " (" + std::to_string(budget) +
      " B) cannot be met: the plan's peak fits but its memory layout's arena " +
      util::human_bytes(m.arena_bytes) + " (" + std::to_string(m.arena_bytes) +
      " B, 256-byte aligned) exceeds it by " + std::to_string(m.arena_bytes - budget) +
      " B after " + std::to_string(fit.replans) +
      " replan(s) at lower budgets; the smallest budget memplan can reach is " +
      util::human_bytes(reachable) + " (" + std::to_string(reachable) + " B); wrote " + dir +
      "plan.json with memory_layout.fits_budget false (not a valid plan for the budget)";
  return Error(msg, fail_over_budget ? ExitCode::kOverBudget : ExitCode::kInfeasible);
}

planner::PlanRequest make_request(const PlanArgs& a, const ModelInputs& in) {
  const ir::Graph& g = in.model.graph;
  const std::uint64_t baseline_peak = ir::baseline_memory(g, ir::Liveness(g)).peak_bytes;
  planner::PlanRequest req;
  req.budget_bytes = parse_budget(a.budget, baseline_peak);
  req.solver = a.solver;
  req.evictions = parse_allow(a.allow);
  req.offload_state = !a.keep_state;
  using Mode = planner::PlanRequest::StateOnHost;
  req.state_on_host = a.state_on_host == "always"  ? Mode::kAlways
                      : a.state_on_host == "never" ? Mode::kNever
                                                   : Mode::kAuto;
  req.time_limit_seconds = a.ilp.time_limit;
  req.threads = a.threads;
  req.progress = a.progress || isatty(STDERR_FILENO) != 0;
  req.interrupted = &g_interrupted;
  req.model_path = in.model.path;
  req.model_sha256 = in.model.sha256;
  return req;
}

// The rewritten model carries the training graph only: with the optimizer
// steps planned too, it is left out by default, and refused when asked for.
void drop_rewrite_with_optimizer(const PlanArgs& a, ModelInputs& in, PlanOutputs& o) {
  if (!in.model.optimizer || !o.model) return;
  const std::string why =
      "rewriting ONNX Runtime's optimizer model is not done, and this plan covers its steps (" +
      in.model.optimizer->path + ")";
  if (a.outputs != PlanArgs::kDefaultOutputs)
    throw InputError("--outputs model: " + why + "; plan " + in.model.path +
                     " alone for a rewritable plan");
  in.warnings.push_back("model.memplan.onnx not written: " + why);
  o.model = false;
}

// A plan that keeps state on the host between iterations has no ONNX
// form (the rewrite refuses it): left out by default, refused when asked for.
void drop_rewrite_with_initial_host(const PlanArgs& a, const planner::Plan& plan, PlanOutputs& o) {
  if (plan.initial_host.empty() || !o.model) return;
  const std::string why = "the plan keeps " + std::to_string(plan.initial_host.size()) +
                          " training-state tensors on the host between iterations "
                          "(initial_host), which an ONNX graph cannot express";
  if (a.outputs != PlanArgs::kDefaultOutputs)
    throw InputError("--outputs model: " + why + "; plan with --state-on-host never for a " +
                     "rewritable plan");
  print_warnings({"model.memplan.onnx not written: " + why});
  o.model = false;
}

// The peak cannot fit: exit 3 (or 5 with --fail-over-budget), with the
// smallest budget memplan can reach.
Error unmet_budget(const PlanArgs& a, const ir::Graph& g, const ir::NodeCosts& costs,
                   const planner::PlanRequest& req, const planner::PlanOutcome& out) {
  const std::uint64_t reachable = planner::smallest_reachable_budget(g, costs, req);
  const std::string msg = "budget " + util::human_bytes(req.budget_bytes) + " (" +
                          std::to_string(req.budget_bytes) + " B) cannot be met: the best " +
                          out.solver_used + " plan peaks at " +
                          util::human_bytes(out.plan.predicted.peak_bytes) +
                          "; the smallest budget memplan can reach is " +
                          util::human_bytes(reachable) + " (" + std::to_string(reachable) + " B)" +
                          // Why checkmate found none: its size limit, or an infeasible MILP.
                          (out.solver_used == "checkmate" ? " (" + out.note + ")" : "");
  return Error(msg, a.fail_over_budget ? ExitCode::kOverBudget : ExitCode::kInfeasible);
}

void print_summary(const planner::LayoutFitOutcome& fit, std::uint64_t budget, double overhead,
                   const std::vector<std::string>& wrote) {
  const planner::Plan& plan = fit.outcome.plan;
  const auto& pr = plan.predicted;
  std::cout << "plan: " << plan.solver.name << " (" << plan.solver.status << "), peak "
            << util::human_bytes(pr.peak_bytes) << " of budget " << util::human_bytes(budget)
            << " (baseline " << util::human_bytes(pr.baseline_peak_bytes) << "), iteration "
            << util::human_seconds(pr.iteration_seconds) << " vs "
            << util::human_seconds(pr.baseline_iteration_seconds) << " (+" << std::fixed
            << std::setprecision(2) << overhead * 100 << "%)\n";
  print_layout(fit, budget, std::cout);
  std::cout << "wrote ";
  for (std::size_t k = 0; k < wrote.size(); ++k) std::cout << (k > 0 ? ", " : "") << wrote[k];
  std::cout << "\n";
}

void run_plan(const PlanArgs& a, StageTimer& timer) {
  PlanOutputs outputs = outputs_of(a);
  ModelInputs in = load_inputs(a.model, timer);
  drop_rewrite_with_optimizer(a, in, outputs);
  print_warnings(in.warnings);
  const ir::Graph& g = in.model.graph;
  planner::PlanRequest req =
      timer.time("baseline", "liveness, baseline peak", [&] { return make_request(a, in); });
  const double max_overhead =
      a.max_overhead.empty() ? -1 : parse_fraction(a.max_overhead, "--max-overhead");

  auto previous = std::signal(SIGINT, on_sigint);
  req.deadline = a.ilp.deadline_from_now();
  double solve_seconds_sum = 0;
  req.solve_seconds_sum = &solve_seconds_sum;
  planner::LayoutFitOutcome fit =
      timer.time("plan_search", "problem, solver, schedule, simulate, tighten, validate, layout",
                 [&] { return planner::search_plan_with_layout(g, in.costs, req); });
  std::signal(SIGINT, previous);
  planner::PlanOutcome& out = fit.outcome;
  const double search_seconds = timer.stages().back().seconds;
  const double solver_seconds = std::min(search_seconds, solve_seconds_sum);
  timer.add("plan_search.solver", solver_seconds,
            "every solve: all rounds, variants, second opinions and replans");
  timer.add("plan_search.rest", search_seconds - solver_seconds,
            "problem, schedule, simulate, tighten, validate, layout");

  // Wall-clock figures are the only thing that differs between two runs
  // on the same inputs (the ILP runs with one thread and a fixed seed).
  if (a.reproducible) out.plan.solver.solve_seconds = 0;
  const auto& pr = out.plan.predicted;
  const double overhead = pr.baseline_iteration_seconds > 0
                              ? pr.iteration_seconds / pr.baseline_iteration_seconds - 1.0
                              : 0.0;
  if (out.ilp_cut_short)
    print_warnings({"the search ran past its ILP time (--search-limit, default " +
                    IlpLimits::default_search_limit() +
                    "): later ILP solves were skipped, and the plan is the best found by then"});
  if (!out.fits) throw unmet_budget(a, g, in.costs, req, out);
  drop_rewrite_with_initial_host(a, out.plan, outputs);

  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(a.out_dir, ec);
  if (ec) throw InputError(a.out_dir + ": cannot create the output directory: " + ec.message());
  // Every written plan carries its arena layout (search_plan_with_layout
  // made it), so a runtime needs no allocator; an interrupted search may
  // not have fitted it to the budget yet, and then the plan goes without
  // (the key is optional; the plan itself fits).
  const bool layout_dropped = g_interrupted && !fit.layout_fits;
  if (layout_dropped) out.plan.memory_layout.reset();
  const std::string dir = a.out_dir + "/";
  const std::vector<std::string> wrote = write_outputs(in, out, outputs, dir, timer);
  if (!a.quiet) print_summary(fit, req.budget_bytes, overhead, wrote);
  if (g_interrupted)
    throw Error(std::string("interrupted: wrote the best plan found so far") +
                    (layout_dropped ? ", without a memory layout (its arena did not fit the "
                                      "budget yet)"
                                    : ""),
                ExitCode::kInterrupted);
  if (!fit.layout_fits)
    throw layout_over_budget(fit, req.budget_bytes,
                             planner::smallest_reachable_budget(g, in.costs, req), dir,
                             a.fail_over_budget);
  if (max_overhead >= 0 && overhead > max_overhead) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "overhead %.2f%% exceeds --max-overhead %.2f%%", overhead * 100,
                  max_overhead * 100);
    throw Error(buf, ExitCode::kOverBudget);
  }
}

}  // namespace

void add_plan_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("plan", "Plan swaps and recomputes to fit a memory budget");
  auto a = std::make_shared<PlanArgs>();
  a->model.add_to(*cmd);
  cmd->add_option("--budget", a->budget,
                  "Device memory budget: 12GiB, 800MB, bytes, or N% of the baseline peak")
      ->required();
  cmd->add_option("--solver", a->solver,
                  "auto, greedy, ilp, chen-sqrt, recompute-greedy, recompute-ilp, vdnn, atp, dtr, "
                  "checkmate (exact recompute-only MILP, graphs of up to 64 nodes)")
      ->capture_default_str();
  cmd->add_option("--allow", a->allow, "What may be used: swap,recompute | swap | recompute")
      ->capture_default_str();
  cmd->add_flag("--keep-state", a->keep_state,
                "Keep parameters, accumulation buffers and optimizer state on the device "
                "(only activations are candidates)");
  cmd->add_option("--state-on-host", a->state_on_host,
                  "Keep training state on the host between iterations (plan.json's "
                  "initial_host): auto (where the plan without it does not fit, or costs more "
                  "than copying the state once), always, "
                  "never")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "always", "never"}));
  cmd->add_option("-o,--out", a->out_dir, "Output directory")->capture_default_str();
  a->ilp.add_to(*cmd, "a plan");
  cmd->add_option("--threads", a->threads, "ILP threads (1 keeps results reproducible)")
      ->capture_default_str()
      ->check(CLI::Range(1, 256));
  cmd->add_option("--max-overhead", a->max_overhead,
                  "CI gate: exit 5 when the overhead exceeds this (e.g. 10%)");
  cmd->add_flag("--fail-over-budget", a->fail_over_budget,
                "CI gate: exit 5 (not 3) when no plan fits the budget");
  cmd->add_flag("--progress", a->progress,
                "Print solver progress on stderr (default when stderr is a terminal)");
  cmd->add_flag("-q,--quiet", a->quiet, "Print nothing on success");
  cmd->add_flag("--reproducible", a->reproducible,
                "Write 0 for the solve time so the same inputs give byte-identical outputs");
  cmd->add_option("--outputs", a->outputs,
                  "Files to write, comma-separated: plan (plan.json), report (report.md), trace "
                  "(trace.json), svg (memory.svg), model (model.memplan.onnx)")
      ->capture_default_str();
  cmd->add_flag("--no-rewrite", a->no_rewrite,
                "Do not write the rewritten model OUTDIR/model.memplan.onnx");
  cmd->add_flag("--timings", a->timings,
                "Print each stage's wall time on stderr (also when no plan fits)");
  cmd->callback([a] {
    with_timings(a->timings, std::cerr, [&](StageTimer& timer) { run_plan(*a, timer); });
  });
}

}  // namespace memplan::cli
