// `memplan compare`: every solver and baseline at several budgets, one table.
#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/commands.h"
#include "cli/model_inputs.h"
#include "cli/plan_options.h"
#include "ir/baseline_memory.h"
#include "ir/liveness.h"
#include "planner/checkmate_plan.h"
#include "planner/plan_search.h"
#include "solvers/solver_registry.h"
#include "util/errors.h"
#include "util/units.h"

namespace memplan::cli {
namespace {

struct CompareArgs {
  ModelOptions model;
  std::string budgets = "80%,60%,40%,30%";
  std::string solvers;  // default: all
  IlpLimits ilp{30, std::nullopt};
  std::string allow = "swap,recompute";
  bool json = false;
};

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

// One solver at one budget: what its plan delivers, and what its model
// expected, to set against the simulated overhead (docs/model.md).
void fill_row(const planner::PlanOutcome& out, nlohmann::ordered_json& row) {
  const auto& pr = out.plan.predicted;
  const auto& solver = out.plan.solver;
  row["fits"] = out.fits;
  row["peak_bytes"] = pr.peak_bytes;
  row["iteration_seconds"] = pr.iteration_seconds;
  row["overhead_percent"] = 100.0 * (pr.iteration_seconds / pr.baseline_iteration_seconds - 1.0);
  row["solve_seconds"] = solver.solve_seconds;
  row["status"] = solver.status;
  row["objective_seconds"] = solver.objective_seconds;
  row["model_overhead_percent"] = 100.0 * solver.objective_seconds / pr.baseline_iteration_seconds;
  if (solver.bound_seconds && solver.objective_seconds > 0) {
    row["ilp_gap_percent"] =
        100.0 * (solver.objective_seconds - *solver.bound_seconds) / solver.objective_seconds;
  } else {
    row["ilp_gap_percent"] = nullptr;
  }
  row["ilp_cut_short"] = out.ilp_cut_short;  // ran past --search-limit
  row["note"] = out.note;  // how the plan was found (rescues, model budgets), as plan's report says
}

// Rows whose search ran past --search-limit, under the table: their ILP
// plans may be what a longer search would improve on.
void print_cut_short(const nlohmann::ordered_json& rows) {
  std::string cut;
  for (const auto& r : rows)
    if (r.value("ilp_cut_short", false))
      cut += (cut.empty() ? "" : ", ") + r["solver"].get<std::string>() + " at " +
             r["budget"].get<std::string>();
  if (!cut.empty())
    std::printf("\nran past --search-limit (later ILP solves skipped): %s\n", cut.c_str());
}

void run_compare(const CompareArgs& a) {
  ModelInputs in = load_inputs(a.model);
  print_warnings(in.warnings);
  const ir::Graph& g = in.model.graph;
  const std::uint64_t baseline_peak = ir::baseline_memory(g, ir::Liveness(g)).peak_bytes;
  std::vector<std::string> names = a.solvers.empty() ? solvers::solver_names() : split(a.solvers);
  if (a.solvers.empty()) names.push_back("dtr");
  // The exact remat plan, where the graph is small enough for its MILP.
  if (a.solvers.empty() && g.nodes().size() <= planner::kCheckmateMaxNodes)
    names.push_back("checkmate");
  for (const auto& n : names)
    if (n != "dtr" && n != "auto" && n != "checkmate")
      solvers::make_solver(n);  // unknown names fail before any work
  const solvers::Evictions evictions = parse_allow(a.allow);

  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const auto& budget_text : split(a.budgets)) {
    const std::uint64_t budget = parse_budget(budget_text, baseline_peak);
    for (const auto& name : names) {
      planner::PlanRequest req;
      req.budget_bytes = budget;
      req.solver = name;
      req.time_limit_seconds = a.ilp.time_limit;
      req.evictions = evictions;
      req.model_path = in.model.path;
      req.model_sha256 = in.model.sha256;
      nlohmann::ordered_json row;
      row["budget"] = budget_text;
      row["budget_bytes"] = budget;
      row["solver"] = name;
      try {
        req.deadline = a.ilp.deadline_from_now();
        fill_row(planner::search_plan(g, in.costs, req), row);
      } catch (const InvalidPlanError& e) {
        row["fits"] = false;
        row["error"] = e.what();
      }
      rows.push_back(row);
    }
  }
  if (a.json) {
    nlohmann::ordered_json doc;
    doc["model"] = in.model.path;
    doc["dims"] = g.dims;
    doc["device"] = in.costs.device.name;
    doc["baseline_peak_bytes"] = baseline_peak;
    doc["baseline_iteration_seconds"] = in.costs.total_seconds();
    doc["rows"] = rows;
    std::cout << doc.dump(2) << "\n";
    return;
  }
  std::printf("%s on %s: baseline peak %s, iteration %s\n\n", in.model.path.c_str(),
              in.costs.device.name.c_str(), util::human_bytes(baseline_peak).c_str(),
              util::human_seconds(in.costs.total_seconds()).c_str());
  std::printf("%-8s %-17s %-5s %12s %12s %10s %10s %8s\n", "budget", "solver", "fits", "peak",
              "iteration", "overhead", "solve", "gap");
  for (const auto& r : rows) {
    if (r.contains("error")) {
      std::printf("%-8s %-17s error: %s\n", r["budget"].get<std::string>().c_str(),
                  r["solver"].get<std::string>().c_str(), r["error"].get<std::string>().c_str());
      continue;
    }
    char gap[32] = "-";
    if (!r["ilp_gap_percent"].is_null())
      std::snprintf(gap, sizeof gap, "%.2f%%", r["ilp_gap_percent"].get<double>());
    std::printf("%-8s %-17s %-5s %12s %12s %9.2f%% %10s %8s\n",
                r["budget"].get<std::string>().c_str(), r["solver"].get<std::string>().c_str(),
                r["fits"].get<bool>() ? "yes" : "no",
                util::human_bytes(r["peak_bytes"].get<std::uint64_t>()).c_str(),
                util::human_seconds(r["iteration_seconds"].get<double>()).c_str(),
                r["overhead_percent"].get<double>(),
                util::human_seconds(r["solve_seconds"].get<double>()).c_str(), gap);
  }
  print_cut_short(rows);
}

}  // namespace

void add_compare_command(CLI::App& app) {
  auto* cmd =
      app.add_subcommand("compare", "Every solver and baseline at several budgets, side by side");
  auto a = std::make_shared<CompareArgs>();
  a->model.add_to(*cmd);
  cmd->add_option("--budgets", a->budgets,
                  "Comma-separated budgets: sizes or % of the baseline peak")
      ->capture_default_str();
  cmd->add_option("--solvers", a->solvers, "Comma-separated solvers (default: all, dtr included)");
  a->ilp.add_to(*cmd, "a row");
  cmd->add_option("--allow", a->allow,
                  "What every solver may use, as plan's --allow: swap,recompute | swap | "
                  "recompute")
      ->capture_default_str();
  cmd->add_flag("--json", a->json, "Print the table as JSON");
  cmd->callback([a] { run_compare(*a); });
}

}  // namespace memplan::cli
