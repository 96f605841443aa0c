// `memplan rewrite MODEL --plan PLAN -o OUT.onnx`: the plan applied to the
// model, as an ONNX training graph (passes/rewrite_model.h says what becomes
// what). A plan for another model or an invalid plan is refused before
// anything is written.
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "cli/commands.h"
#include "cli/model_inputs.h"
#include "passes/rewrite_file.h"
#include "planner/plan_json.h"
#include "planner/plan_validator.h"
#include "util/errors.h"
#include "util/sha256.h"

namespace memplan::cli {
namespace {

struct RewriteArgs {
  ModelOptions model;
  std::string plan;
  std::string out;
  bool quiet = false;
  std::string anchors = "all";
};

// model.sha256 as the plan states it; empty when it does not (plan_from_json
// then names the missing key).
std::string plan_model_sha256(const nlohmann::json& doc) {
  if (!doc.is_object()) return {};
  auto m = doc.find("model");
  if (m == doc.end() || !m->is_object()) return {};
  auto sha = m->find("sha256");
  return sha != m->end() && sha->is_string() ? sha->get<std::string>() : std::string();
}

// A file's bytes, for their sha256.
std::string file_bytes(const std::string& path, const std::string& what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open the " + what);
  std::stringstream text;
  text << in.rdbuf();
  if (in.bad()) throw InputError(path + ": cannot read the " + what);
  return text.str();
}

void run(RewriteArgs a) {
  require_training_graph_only(a.model, "rewrite");
  nlohmann::json doc = planner::read_plan_json(a.plan);
  const std::string plan_sha256 = util::sha256_hex(file_bytes(a.plan, "plan file"));
  // First of all, so that a plan for another model is told as such and not
  // as the first dim or node name of it that this model lacks.
  const std::string model_sha256 = util::sha256_hex(file_bytes(a.model.model, "model"));
  const std::string planned_for = plan_model_sha256(doc);
  if (!planned_for.empty() && planned_for != model_sha256)
    throw InvalidPlanError(a.plan + ": model.sha256 " + planned_for + " is not the sha256 of " +
                           a.model.model + " (" + model_sha256 +
                           "): the plan was made for another model file");
  dims_from_plan(doc, a.model);
  ModelInputs in = load_inputs(a.model);
  print_warnings(in.warnings);
  const ir::Graph& graph = in.model.graph;
  if (doc.is_object() && doc.contains("model") && doc["model"].is_object() &&
      doc["model"].contains("optimizer"))
    throw InvalidPlanError(a.plan +
                           ": made with an optimizer model (model.optimizer), whose steps a "
                           "rewrite cannot carry: rewriting ONNX Runtime's optimizer model is not "
                           "done; plan " +
                           a.model.model + " alone to rewrite it");
  planner::Plan plan = planner::plan_from_json(graph, doc, a.plan);
  planner::Validation v = planner::validate(graph, plan);
  if (!v.valid) throw InvalidPlanError(a.plan + ": invalid: " + v.message);

  passes::RewriteOptions options;
  options.plan_sha256 = plan_sha256;
  options.model_sha256 = in.model.sha256;
  options.anchor_order = a.anchors == "all"    ? passes::AnchorOrder::kAll
                         : a.anchors == "none" ? passes::AnchorOrder::kNone
                                               : passes::AnchorOrder::kRemakes;
  passes::PlanSummary s =
      passes::write_rewritten_model(in.model.proto, graph, plan, options, a.out);
  if (!a.quiet) {
    const std::size_t before = graph.nodes().size();
    std::cout << "wrote " << a.out << ": " << before << " nodes + " << s.swap_outs << " SwapOut + "
              << s.swap_ins << " SwapIn + " << s.recomputes << " recompute, " << s.anchors
              << " nodes ordered by anchors\n";
  }
}

}  // namespace

void add_rewrite_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "rewrite", "Write the model with a plan's swaps and recomputes as ONNX nodes");
  auto a = std::make_shared<RewriteArgs>();
  a->model.add_to(*cmd);
  cmd->add_option("--plan", a->plan, "plan.json made for MODEL")->required();
  cmd->add_option("-o,--out", a->out, "The rewritten model (.onnx)")->required();
  cmd->add_flag("-q,--quiet", a->quiet, "Print nothing on success");
  cmd->add_option("--anchors", a->anchors,
                  "What waits, inside ONNX Runtime, for the node the plan issues it after: all "
                  "(the plan's whole order: recomputes, reloads and the nodes ORT would move), "
                  "remakes (recomputes and reloads only) or none. The memory is freed in ORT "
                  "only with SessionOptions.enable_mem_reuse = False (docs/ort-anchoring.md)")
      ->check(CLI::IsMember({"remakes", "all", "none"}))
      ->capture_default_str();
  cmd->callback([a] { run(*a); });
}

}  // namespace memplan::cli
