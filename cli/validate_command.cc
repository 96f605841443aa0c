// `memplan validate MODEL PLAN`: checks a plan.json against the model under
// every rule of PLAN_FORMAT.md and names the first rule it breaks.
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/commands.h"
#include "cli/model_inputs.h"
#include "cli/plan_file.h"
#include "planner/plan_json.h"
#include "planner/plan_validator.h"
#include "planner/simulator.h"
#include "util/errors.h"
#include "util/units.h"

namespace memplan::cli {
namespace {

struct ValidateOptions {
  ModelOptions model;
  std::string plan;
  bool json = false;
};

void report(const ValidateOptions& o, const planner::Validation& v, double iteration_seconds) {
  if (o.json) {
    nlohmann::ordered_json out;
    out["valid"] = v.valid;
    if (v.valid) {
      out["peak_bytes"] = v.peak_bytes;
      out["iteration_seconds"] = iteration_seconds;
    } else {
      out["step"] = v.step;
      out["message"] = v.message;
    }
    std::cout << out.dump(2) << "\n";
  } else if (v.valid) {
    std::cout << "valid: peak " << v.peak_bytes << " bytes (" << util::human_bytes(v.peak_bytes)
              << "), iteration " << util::human_seconds(iteration_seconds) << "\n";
  }
  if (!v.valid) throw InvalidPlanError(o.plan + ": invalid: " + v.message);
}

void run(ValidateOptions o) {
  nlohmann::json doc = planner::read_plan_json(o.plan);
  dims_from_plan(doc, o.model);
  ModelInputs in = load_inputs(o.model);
  print_warnings(in.warnings);
  const ir::Graph& graph = in.model.graph;
  // Before the nodes are read: a plan with the optimizer's steps names nodes
  // the training graph alone lacks, and the other way round.
  if (std::string why = optimizer_mismatch(doc, in.model); !why.empty()) {
    planner::Validation v;
    v.valid = false;
    v.message = why;
    report(o, v, 0);
    return;
  }
  planner::Plan plan = planner::plan_from_json(graph, doc, o.plan);

  if (plan.model_sha256 != in.model.sha256) {
    planner::Validation v;
    v.valid = false;
    v.message = "model.sha256 " + plan.model_sha256 + " is not the sha256 of " + o.model.model +
                " (" + in.model.sha256 + "): the plan was made for another model file";
    report(o, v, 0);
    return;
  }
  planner::Validation v = planner::validate(graph, plan);
  // The plan's own node_seconds time it, not the costs given here.
  double iteration = v.valid ? planner::simulate(graph, plan).iteration_seconds : 0;
  report(o, v, iteration);
}

}  // namespace

void add_validate_command(CLI::App& app) {
  auto* cmd =
      app.add_subcommand("validate", "Check a plan.json against its model (exit 4 if invalid)");
  auto opts = std::make_shared<ValidateOptions>();
  opts->model.add_to(*cmd);
  cmd->add_option("plan", opts->plan, "plan.json to check")->required();
  cmd->add_flag("--json", opts->json, "Print the verdict as JSON");
  cmd->callback([opts] { run(*opts); });
}

}  // namespace memplan::cli
