// `memplan run`: executes a plan on the runtime (runtime-stub/) and puts
// what it measured next to what the plan predicted: arena bytes, iteration
// time, and integrity errors (there should be none).
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "cli/commands.h"
#include "cli/model_inputs.h"
#include "cli/plan_file.h"
#include "planner/memory_layout.h"
#include "planner/plan_json.h"
#include "planner/plan_validator.h"
#include "runtime-stub/backends.h"
#include "runtime-stub/executor.h"
#include "util/errors.h"
#include "util/units.h"

namespace memplan::cli {
namespace {

using nlohmann::ordered_json;

struct RunArgs {
  ModelOptions model;
  std::string plan;
  std::string backend = "host";
  double time_scale = -1;  // < 0: the backend's default
  int iterations = 1;
  bool json = false;
  bool no_poison = false;
};

std::string percent(double measured, double predicted) {
  if (predicted <= 0) return "n/a";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.1f%%", 100.0 * (measured / predicted - 1.0));
  return buf;
}

template <typename T>
ordered_json or_null(const std::optional<T>& v) {
  return v ? ordered_json(*v) : ordered_json(nullptr);
}

// Measured figures come from the backend's run; predicted ones are the
// plan's own (the layout's arena is a promise until something measures it).
ordered_json memory_json(const planner::MemoryLayout& layout, bool layout_from_plan,
                         const runtime::RunReport& r) {
  return {
      {"budget_bytes", r.budget_bytes},
      {"measured",
       {{"bytes", r.measured_bytes()},
        {"from", r.measured_bytes_source()},
        {"allocated_bytes", r.memory.allocated_bytes},
        {"touched_bytes", or_null(r.touched_bytes)},
        {"device_arena_bytes", or_null(r.memory.device_arena_bytes)},
        {"device_total_bytes", or_null(r.memory.device_total_bytes)},
        {"host_pool_bytes", r.host_pool_bytes}}},
      {"predicted",
       {{"peak_bytes", r.planned_peak_bytes},
        {"layout_arena_bytes", layout.arena_bytes},
        {"layout", layout_from_plan ? "plan" : "computed"}}},
      {"fragmentation", r.fragmentation()},
      {"fits_budget", !r.over_budget()},
  };
}

ordered_json to_json(const RunArgs& a, const planner::Plan& plan,
                     const planner::MemoryLayout& layout, bool layout_from_plan,
                     const runtime::RunReport& r) {
  ordered_json errors = ordered_json::array();
  for (const auto& e : r.first_errors)
    errors.push_back({{"step", e.step}, {"tensor", e.tensor}, {"what", e.what}});
  ordered_json overrun = nullptr;
  if (r.overrun_seconds)
    overrun = {{"compute", (*r.overrun_seconds)[0]},
               {"device_to_host", (*r.overrun_seconds)[1]},
               {"host_to_device", (*r.overrun_seconds)[2]}};
  return {
      {"plan", a.plan},
      {"backend", r.backend},
      {"time_scale", r.time_scale},
      {"poison_frees", r.poison_frees},
      {"memory", memory_json(layout, layout_from_plan, r)},
      {"iteration",
       {{"measured_seconds", r.measured_median},
        {"predicted_seconds", r.predicted_seconds},
        {"plan_predicted_seconds", plan.predicted.iteration_seconds},
        {"overrun_seconds", overrun},
        {"runs", r.measured_seconds}}},
      {"integrity",
       {{"errors", r.integrity_errors()},
        {"wrong_bytes", r.wrong_bytes},
        {"freed_memory", r.freed_reads},
        {"never_resident", r.static_errors},
        {"checks", r.checks},
        {"first", errors}}},
  };
}

std::string bytes_text(std::uint64_t b) {
  return std::to_string(b) + " bytes (" + util::human_bytes(b) + ")";
}

void print_memory(const runtime::RunReport& r, std::ostream& out) {
  char frag[32];
  std::snprintf(frag, sizeof frag, "%.3f", r.fragmentation());
  out << "memory     measured " << bytes_text(r.measured_bytes()) << " ("
      << r.measured_bytes_source() << ") vs budget " << bytes_text(r.budget_bytes) << ": "
      << (r.over_budget() ? "OVER BUDGET" : "fits") << "\n";
  out << "  measured allocated " << r.memory.allocated_bytes;
  if (r.touched_bytes) out << ", touched " << *r.touched_bytes;
  if (r.memory.device_arena_bytes) out << ", device arena " << *r.memory.device_arena_bytes;
  if (r.memory.device_total_bytes) out << ", device total " << *r.memory.device_total_bytes;
  out << ", host pool " << r.host_pool_bytes << "\n";
  out << "  predicted peak " << r.planned_peak_bytes << ", layout arena " << r.layout_arena_bytes
      << "; fragmentation (measured / peak) " << frag << "\n";
}

void print_text(const RunArgs& a, const planner::Plan& plan, const runtime::RunReport& r,
                std::ostream& out) {
  char scale[64];
  std::snprintf(scale, sizeof scale, "%g", r.time_scale);
  out << "run        " << a.plan << " on " << r.backend << ", time scale " << scale << ", "
      << r.measured_seconds.size() << " iteration(s)"
      << (r.poison_frees ? "" : ", frees unpoisoned") << "\n";
  print_memory(r, out);
  out << "iteration  " << util::human_seconds(r.measured_median) << " measured vs "
      << util::human_seconds(r.predicted_seconds) << " predicted ("
      << util::human_seconds(plan.predicted.iteration_seconds) << " x " << scale
      << "): " << percent(r.measured_median, r.predicted_seconds) << "\n";
  if (const auto& o = r.overrun_seconds; o && (*o)[0] + (*o)[1] + (*o)[2] > 0)
    out << "overrun    compute " << util::human_seconds((*o)[0]) << ", device->host "
        << util::human_seconds((*o)[1]) << ", host->device " << util::human_seconds((*o)[2])
        << " past the planned times (measured)\n";
  out << "integrity  " << r.integrity_errors() << " error(s) in " << r.checks
      << " checks (wrong bytes " << r.wrong_bytes << ", freed memory " << r.freed_reads
      << ", never resident " << r.static_errors << ")\n";
  for (const auto& e : r.first_errors) {
    out << "  ";
    if (e.tensor.empty()) {
      out << e.what << "\n";
    } else {
      out << (e.step == static_cast<std::int64_t>(plan.schedule.size())
                  ? std::string("end")
                  : "step " + std::to_string(e.step))
          << ": '" << e.tensor << "': " << e.what << "\n";
    }
  }
}

void run(RunArgs a) {
  nlohmann::json doc = planner::read_plan_json(a.plan);
  // Without --dim, bind the dims the plan was made for.
  if (a.model.dims.empty() && doc.is_object() && doc.contains("model") &&
      doc["model"].is_object() && doc["model"].contains("dims") && doc["model"]["dims"].is_object())
    for (const auto& [name, value] : doc["model"]["dims"].items())
      if (value.is_number_unsigned())
        a.model.dims.push_back(name + "=" + std::to_string(value.get<std::uint64_t>()));
  // Before loading the model: a machine that cannot run the backend says so
  // at once, in one line.
  std::unique_ptr<runtime::Backend> backend = runtime::make_backend(a.backend);

  ModelInputs in = load_inputs(a.model);
  if (!a.model.costs.empty() || !a.model.profile.empty())
    in.warnings.push_back("--plan is timed by its own node_seconds; --costs/--profile are ignored");
  const ir::Graph& g = in.model.graph;
  if (std::string why = optimizer_mismatch(doc, in.model); !why.empty())
    throw InvalidPlanError(a.plan + ": " + why);
  planner::Plan plan = planner::plan_from_json(g, doc, a.plan);
  if (plan.model_sha256 != in.model.sha256)
    in.warnings.push_back(a.plan + ": made for another model file (sha256 " + plan.model_sha256 +
                          "); running it by node and tensor names");
  // Every rule but the budget: a plan over its budget still runs, so the
  // run can measure how much it takes (and then fails below).
  planner::Plan check = plan;
  check.budget_bytes = std::max(check.budget_bytes, check.predicted.peak_bytes);
  if (check.memory_layout)
    check.budget_bytes = std::max(check.budget_bytes, check.memory_layout->arena_bytes);
  if (planner::Validation v = planner::validate(g, check); !v.valid)
    throw InvalidPlanError(a.plan + ": invalid at step " + std::to_string(v.step) + ": " +
                           v.message);
  const bool layout_from_plan = plan.memory_layout.has_value();
  planner::MemoryLayout layout;
  if (layout_from_plan) {
    if (std::string why = planner::memory_layout_problem(g, plan, *plan.memory_layout);
        !why.empty())
      throw InvalidPlanError(a.plan + ": " + why);
    layout = *plan.memory_layout;
  } else {
    in.warnings.push_back(a.plan +
                          ": has no memory_layout (made before it existed); computing one");
    layout = planner::compute_memory_layout(g, plan);
  }
  print_warnings(in.warnings);

  runtime::RunOptions options;
  if (a.time_scale >= 0) options.time_scale = a.time_scale;
  options.iterations = a.iterations;
  options.poison_frees = !a.no_poison;
  const runtime::RunReport report = runtime::run_plan(g, plan, layout, *backend, options);
  if (a.json) {
    std::cout << to_json(a, plan, layout, layout_from_plan, report).dump(2) << "\n";
  } else {
    print_text(a, plan, report, std::cout);
  }
  std::cout.flush();
  if (report.integrity_errors() > 0)
    throw Error(std::to_string(report.integrity_errors()) +
                    " integrity error(s): the plan did not bring back the bytes it promised",
                ExitCode::kInvalidPlan);
  if (report.over_budget())
    throw Error("measured " + std::to_string(report.measured_bytes()) + " device bytes (" +
                    report.measured_bytes_source() + ") exceed budget_bytes " +
                    std::to_string(report.budget_bytes) + " by " +
                    std::to_string(report.measured_bytes() - report.budget_bytes),
                ExitCode::kOverBudget);
}

}  // namespace

void add_run_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "run", "Execute a plan on the runtime: measured arena, time and integrity vs predicted");
  auto a = std::make_shared<RunArgs>();
  a->model.add_to(*cmd);
  cmd->add_option("--plan", a->plan, "plan.json to execute")->required();
  cmd->add_option("--backend", a->backend, "host (threads and memcpy, anywhere) or cuda (a GPU)")
      ->capture_default_str()
      ->check(CLI::IsMember({"host", "cuda"}));
  cmd->add_option("--time-scale", a->time_scale,
                  "Multiply every planned time by this (default: cuda 1; host the smallest "
                  "scale at which it keeps the plan's timing)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--iterations", a->iterations, "Iterations to run; the median time is reported")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000));
  cmd->add_flag("--no-poison", a->no_poison,
                "Frees write no poison, as PLAN_FORMAT times them (for timing runs; reads of "
                "freed memory then go unnoticed)");
  cmd->add_flag("--json", a->json, "Print the report as JSON");
  cmd->callback([a] { run(*a); });
}

}  // namespace memplan::cli
