// `memplan simulate`: the what-if. Given per-tensor decisions (or a whole
// plan), what peak and what iteration time would this give, and where do the
// streams wait? Optionally a Chrome trace and an SVG memory plot of it.
#include <algorithm>
#include <array>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/model_inputs.h"
#include "cli/plan_file.h"
#include "ir/baseline_memory.h"
#include "ir/liveness.h"
#include "planner/baseline_plan.h"
#include "planner/plan_json.h"
#include "planner/plan_search.h"
#include "planner/plan_validator.h"
#include "planner/scheduler.h"
#include "planner/simulator.h"
#include "report/chrome_trace.h"
#include "report/memory_plot_svg.h"
#include "util/errors.h"
#include "util/text_file.h"
#include "util/units.h"

namespace memplan::cli {
namespace {

using nlohmann::ordered_json;

struct SimulateOptions {
  ModelOptions model;
  std::string plan;
  std::string decisions;
  std::string evict_all;  // swap | recompute: every activation
  std::string budget;
  std::string trace;
  std::string svg;
  bool json = false;
};

// What was simulated, whichever way it came in.
struct WhatIf {
  planner::Plan plan;
  planner::SimResult sim;
  bool fits = true;
  std::string diagnosis;               // why it does not fit
  std::vector<std::string> fell_back;  // asked swap/recompute, applied keep
};

// {"swap": [names], "recompute": [names]} and/or {"decisions": {name:
// "swap"|"recompute"|"keep"}}, by TensorId; everything unnamed is kept.
std::vector<planner::Decision> read_decisions(const ir::Graph& graph, const std::string& path) {
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(util::read_text_file(path));
  } catch (const nlohmann::json::parse_error& e) {
    throw InputError(path + ": not valid JSON: " + e.what());
  }
  const std::string shape =
      R"(expected {"swap": [tensor, ...], "recompute": [tensor, ...]} or {"decisions": {tensor: "swap"|"recompute"|"keep"}})";
  if (!doc.is_object() ||
      (!doc.contains("swap") && !doc.contains("recompute") && !doc.contains("decisions")))
    throw InputError(path + ": " + shape);

  std::vector<planner::Decision> out(graph.tensors().size(), planner::Decision::kKeep);
  std::vector<bool> named(graph.tensors().size(), false);
  auto set = [&](const std::string& name, planner::Decision d, const std::string& key) {
    auto t = graph.find_tensor(name);
    if (!t) throw InputError(path + ": " + key + ": tensor '" + name + "' is not in the graph");
    if (named[*t] && out[*t] != d)
      throw InputError(path + ": tensor '" + name + "' is given two decisions (" +
                       std::string(planner::to_string(out[*t])) + " and " +
                       std::string(planner::to_string(d)) + ")");
    named[*t] = true;
    out[*t] = d;
  };
  for (auto [key, decision] : {std::pair{"swap", planner::Decision::kSwap},
                               std::pair{"recompute", planner::Decision::kRecompute}}) {
    if (!doc.contains(key)) continue;
    const auto& list = doc[key];
    if (!list.is_array())
      throw InputError(path + ": " + key + ": expected an array of tensor names");
    for (std::size_t i = 0; i < list.size(); ++i) {
      std::string where = std::string(key) + "[" + std::to_string(i) + "]";
      if (!list[i].is_string()) throw InputError(path + ": " + where + ": expected a tensor name");
      set(list[i].get<std::string>(), decision, where);
    }
  }
  if (doc.contains("decisions")) {
    const auto& map = doc["decisions"];
    if (!map.is_object()) throw InputError(path + ": decisions: " + shape);
    for (const auto& [name, value] : map.items()) {
      std::optional<planner::Decision> d;
      if (value.is_string()) d = planner::parse_decision(value.get<std::string>());
      if (!d)
        throw InputError(path + ": decisions.\"" + name +
                         "\": expected \"keep\", \"swap\" or \"recompute\", got " + value.dump());
      set(name, *d, "decisions");
    }
  }
  return out;
}

// The first step over the budget, in the words of the validator.
std::string over_budget(const ir::Graph& graph, const planner::Plan& plan,
                        const planner::SimResult& sim, std::uint64_t budget) {
  for (std::size_t i = 0; i < sim.steps.size(); ++i) {
    if (sim.steps[i].bytes_in_use_after <= budget) continue;
    const planner::Step& s = plan.schedule[i];
    std::string what = s.on_node() ? graph.node(s.id).name : graph.tensor(s.id).name;
    return "peak " + util::human_bytes(sim.peak_bytes) + " is over the budget " +
           util::human_bytes(budget) + " by " + util::human_bytes(sim.peak_bytes - budget) +
           "; first over at step " + std::to_string(i) + " (" +
           std::string(planner::to_string(s.op)) + " '" + what + "')";
  }
  return "the resident graph inputs and initializers alone are over the budget " +
         util::human_bytes(budget);
}

WhatIf from_decisions(const SimulateOptions& o, const ModelInputs& in, std::uint64_t budget) {
  const ir::Graph& graph = in.model.graph;
  std::vector<planner::Decision> requested;
  if (!o.evict_all.empty()) {
    // Every activation; the scheduler falls back to keep where it must.
    const auto d = o.evict_all == "swap" ? planner::Decision::kSwap : planner::Decision::kRecompute;
    requested.assign(graph.tensors().size(), planner::Decision::kKeep);
    for (ir::TensorId t = 0; t < graph.tensors().size(); ++t)
      if (graph.tensor(t).cls == ir::TensorClass::kActivation) requested[t] = d;
  } else {
    requested = read_decisions(graph, o.decisions);
  }
  // Scheduled as `plan` schedules: in the planning order, so a plan's own
  // decisions reproduce its schedule.
  planner::ScheduledDecisions sched =
      planner::schedule_decisions(graph, in.costs, requested, budget);

  WhatIf w;
  planner::Plan& p = w.plan;
  p = std::move(sched.plan);
  p.model_path = in.model.path;
  p.model_sha256 = in.model.sha256;
  p.solver = {"what-if", std::string(to_string(solvers::SolveStatus::kHeuristic)), 0, std::nullopt,
              0};
  for (ir::TensorId t = 0; t < graph.tensors().size(); ++t)
    if (requested[t] != planner::Decision::kKeep && p.decisions[t] == planner::Decision::kKeep)
      w.fell_back.push_back(graph.tensor(t).name);

  // The simulator trusts its schedule; check the scheduler's against every
  // rule but the budget, which is reported below instead.
  planner::Plan unlimited = p;
  unlimited.budget_bytes = UINT64_MAX;
  planner::fill_predicted(graph, unlimited);
  if (planner::Validation v = planner::validate(graph, unlimited); !v.valid)
    throw InvalidPlanError("the scheduler made an invalid schedule for " + o.decisions + ": " +
                           v.message);
  w.sim = planner::simulate(graph, p);
  w.fits = sched.fits && w.sim.peak_bytes <= budget;
  if (!w.fits)
    w.diagnosis = sched.diagnosis.empty() ? over_budget(graph, p, w.sim, budget) : sched.diagnosis;
  return w;
}

WhatIf from_plan(const SimulateOptions& o, const ModelInputs& in, const nlohmann::json& doc,
                 std::optional<std::uint64_t> budget) {
  const ir::Graph& graph = in.model.graph;
  WhatIf w;
  if (std::string why = optimizer_mismatch(doc, in.model); !why.empty())
    throw InvalidPlanError(o.plan + ": " + why);
  w.plan = planner::plan_from_json(graph, doc, o.plan);
  if (w.plan.model_sha256 != in.model.sha256)
    print_warnings({o.plan + ": made for another model file (sha256 " + w.plan.model_sha256 + ", " +
                    o.model.model + " has " + in.model.sha256 +
                    "); simulating it by node and tensor names"});
  // A what-if may edit a plan's schedule by hand, so its predicted numbers
  // and budget are not held against it; every schedule rule still is.
  planner::Plan check = w.plan;
  check.budget_bytes = UINT64_MAX;
  // An edited schedule makes other allocations than the layout describes.
  check.memory_layout.reset();
  planner::fill_predicted(graph, check);
  if (planner::Validation v = planner::validate(graph, check); !v.valid)
    throw InvalidPlanError(o.plan + ": invalid: " + v.message);
  if (budget) w.plan.budget_bytes = *budget;
  w.sim = planner::simulate(graph, w.plan);
  w.fits = w.sim.peak_bytes <= w.plan.budget_bytes;
  if (!w.fits) w.diagnosis = over_budget(graph, w.plan, w.sim, w.plan.budget_bytes);
  return w;
}

double percent_change(double value, double base) {
  return base > 0 ? 100.0 * (value / base - 1.0) : 0.0;
}

ordered_json make_report(const SimulateOptions& o, const ModelInputs& in, const WhatIf& w) {
  const ir::Graph& g = in.model.graph;
  const auto& sim = w.sim;
  std::uint64_t base_peak = ir::baseline_memory(g, ir::Liveness(g)).peak_bytes;
  double base_seconds = 0;
  for (double s : w.plan.node_seconds) base_seconds += s;

  std::size_t swapped = 0, recomputed = 0;
  for (planner::Decision d : w.plan.decisions) {
    swapped += d == planner::Decision::kSwap;
    recomputed += d == planner::Decision::kRecompute;
  }
  std::array<std::size_t, 5> steps{};
  double recompute_seconds = 0;
  for (std::size_t i = 0; i < w.plan.schedule.size(); ++i) {
    ++steps[static_cast<std::size_t>(w.plan.schedule[i].op)];
    if (w.plan.schedule[i].op == planner::StepOp::kRecompute)
      recompute_seconds += sim.steps[i].end - sim.steps[i].start;
  }

  ordered_json r;
  r["model"] = {{"path", in.model.path}, {"dims", g.dims}};
  r["what_if"] =
      o.plan.empty() ? ordered_json{{"decisions", o.decisions}} : ordered_json{{"plan", o.plan}};
  r["device"] = w.plan.device.name;
  r["budget_bytes"] =
      w.plan.budget_bytes == UINT64_MAX ? ordered_json(nullptr) : ordered_json(w.plan.budget_bytes);
  r["fits"] = w.fits;
  r["diagnosis"] = w.fits ? ordered_json(nullptr) : ordered_json(w.diagnosis);
  r["peak"] = {{"bytes", sim.peak_bytes},
               {"human", util::human_bytes(sim.peak_bytes)},
               {"baseline_bytes", base_peak},
               {"baseline_human", util::human_bytes(base_peak)},
               {"change_percent", percent_change(static_cast<double>(sim.peak_bytes),
                                                 static_cast<double>(base_peak))}};
  r["iteration"] = {{"seconds", sim.iteration_seconds},
                    {"baseline_seconds", base_seconds},
                    {"overhead_percent", percent_change(sim.iteration_seconds, base_seconds)},
                    {"compute_seconds", sim.compute_seconds},
                    {"recompute_seconds", recompute_seconds}};
  r["stall_seconds"] = {{"compute", sim.stall_seconds[0]},
                        {"device_to_host", sim.stall_seconds[1]},
                        {"host_to_device", sim.stall_seconds[2]}};
  r["swapped_tensors"] = swapped;
  r["recomputed_tensors"] = recomputed;
  r["fell_back_to_keep"] = w.fell_back;
  ordered_json by_op = ordered_json::object();
  for (std::size_t k = 0; k < steps.size(); ++k)
    by_op[std::string(planner::to_string(static_cast<planner::StepOp>(k)))] = steps[k];
  r["steps"] = by_op;
  r["trace"] = o.trace.empty() ? ordered_json(nullptr) : ordered_json(o.trace);
  r["svg"] = o.svg.empty() ? ordered_json(nullptr) : ordered_json(o.svg);
  return r;
}

void print_text(const ordered_json& r, std::ostream& out) {
  auto str = [](const ordered_json& v) { return v.get<std::string>(); };
  auto secs = [](const ordered_json& v) { return util::human_seconds(v.get<double>()); };
  auto pct = [](const ordered_json& v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%+.1f%%", v.get<double>());
    return std::string(buf);
  };
  out << "model      " << str(r["model"]["path"]);
  for (const auto& [k, v] : r["model"]["dims"].items()) out << " " << k << "=" << v;
  out << "\nwhat-if    "
      << (r["what_if"].contains("plan") ? "plan " + str(r["what_if"]["plan"])
                                        : "decisions " + str(r["what_if"]["decisions"]))
      << " on " << str(r["device"]) << ": " << r["swapped_tensors"] << " swapped, "
      << r["recomputed_tensors"] << " recomputed";
  if (!r["fell_back_to_keep"].empty())
    out << " (" << r["fell_back_to_keep"].size() << " kept: cannot apply)";
  const auto& p = r["peak"];
  out << "\npeak       " << p["bytes"] << " bytes (" << str(p["human"]) << ") vs baseline "
      << p["baseline_bytes"] << " bytes (" << str(p["baseline_human"])
      << "): " << pct(p["change_percent"]) << "\n";
  if (r["budget_bytes"].is_null()) {
    out << "budget     none\n";
  } else {
    out << "budget     " << r["budget_bytes"] << " bytes ("
        << util::human_bytes(r["budget_bytes"].get<std::uint64_t>())
        << "): " << (r["fits"].get<bool>() ? "fits" : "does NOT fit") << "\n";
  }
  const auto& it = r["iteration"];
  out << "iteration  " << secs(it["seconds"]) << " vs baseline " << secs(it["baseline_seconds"])
      << ": " << pct(it["overhead_percent"]) << " overhead\n"
      << "compute    " << secs(it["compute_seconds"]) << " (recompute "
      << secs(it["recompute_seconds"]) << ")\n";
  const auto& st = r["stall_seconds"];
  out << "stall      compute " << secs(st["compute"]) << ", device->host "
      << secs(st["device_to_host"]) << ", host->device " << secs(st["host_to_device"]) << "\n";
  out << "steps     ";
  for (const auto& [op, n] : r["steps"].items()) out << " " << n << " " << op;
  out << "\n";
  if (!r["trace"].is_null()) out << "trace      " << str(r["trace"]) << "\n";
  if (!r["svg"].is_null()) out << "plot       " << str(r["svg"]) << "\n";
}

void run(SimulateOptions o) {
  const int sources =
      (o.plan.empty() ? 0 : 1) + (o.decisions.empty() ? 0 : 1) + (o.evict_all.empty() ? 0 : 1);
  if (sources != 1)
    throw UsageError(
        "simulate: give exactly one of --plan PLAN, --decisions D.json or --evict-all "
        "swap|recompute");
  if (!o.evict_all.empty() && o.evict_all != "swap" && o.evict_all != "recompute")
    throw UsageError("--evict-all: '" + o.evict_all + "' is not swap or recompute");
  std::optional<std::uint64_t> budget;
  if (!o.budget.empty()) budget = util::parse_bytes(o.budget, "--budget");

  nlohmann::json doc;
  if (!o.plan.empty()) {
    doc = planner::read_plan_json(o.plan);
    dims_from_plan(doc, o.model);
  }
  ModelInputs in = load_inputs(o.model);
  if (!o.plan.empty() && (!o.model.costs.empty() || !o.model.profile.empty()))
    in.warnings.push_back("--plan is timed by its own node_seconds; --costs/--profile are ignored");
  print_warnings(in.warnings);

  WhatIf w = o.plan.empty() ? from_decisions(o, in, budget.value_or(UINT64_MAX))
                            : from_plan(o, in, doc, budget);
  if (!w.fell_back.empty()) {
    std::string names;
    for (std::size_t i = 0; i < w.fell_back.size() && i < 5; ++i)
      names += (i ? ", '" : "'") + w.fell_back[i] + "'";
    if (w.fell_back.size() > 5) names += " and " + std::to_string(w.fell_back.size() - 5) + " more";
    print_warnings(
        {o.decisions + ": " + std::to_string(w.fell_back.size()) +
         " decision(s) cannot apply (graph input/output, random node, or no backward reader) and "
         "stay keep: " +
         names});
  }

  // Written even when the plan does not fit: the trace shows where.
  if (!o.trace.empty()) report::write_chrome_trace(in.model.graph, w.plan, w.sim, o.trace);
  if (!o.svg.empty()) report::write_memory_plot_svg(in.model.graph, w.plan, w.sim, o.svg);

  ordered_json report = make_report(o, in, w);
  if (o.json) {
    std::cout << report.dump(2) << "\n";
  } else {
    print_text(report, std::cout);
  }
  std::cout.flush();
  if (!w.fits) throw InfeasibleError(w.diagnosis);
}

}  // namespace

void add_simulate_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "simulate",
      "What if: time and size a plan, or swap/recompute decisions, against the baseline");
  auto opts = std::make_shared<SimulateOptions>();
  opts->model.add_to(*cmd);
  auto* plan = cmd->add_option("--plan", opts->plan,
                               "plan.json: simulate its schedule with its node_seconds");
  auto* dec = cmd->add_option(
      "--decisions", opts->decisions,
      R"(JSON {"swap": [tensor...], "recompute": [tensor...]}: schedule and simulate these)");
  auto* all =
      cmd->add_option("--evict-all", opts->evict_all,
                      "swap | recompute: what if every activation were swapped (or recomputed)");
  plan->excludes(dec);
  plan->excludes(all);
  dec->excludes(all);
  cmd->add_option("--budget", opts->budget,
                  "Device-memory limit, e.g. 12GiB (default: none; with --plan: the plan's "
                  "budget); exit 3 if over");
  cmd->add_option("--trace", opts->trace, "Write a Chrome trace (open in Perfetto) to this file");
  cmd->add_option("--svg", opts->svg, "Write an SVG plot of memory over time to this file");
  cmd->add_flag("--json", opts->json, "Print the report as JSON");
  cmd->callback([opts] { run(*opts); });
}

}  // namespace memplan::cli
