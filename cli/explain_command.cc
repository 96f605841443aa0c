// `memplan explain OUT.onnx`: what a rewritten model does, from the model
// alone: the plan summary it carries and its swaps and recomputes by layer.
#include <fstream>
#include <iomanip>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "cli/commands.h"
#include "cli/model_inputs.h"
#include "passes/engine_support.h"
#include "passes/layer_report.h"
#include "passes/plan_summary.h"
#include "util/errors.h"
#include "util/units.h"

namespace memplan::cli {
namespace {

struct ExplainArgs {
  std::string model;
  bool json = false;
  std::string engine;  // empty: every engine
};

std::vector<passes::EngineSupport> engines_for(const passes::PlanSummary& s,
                                               const std::string& engine) {
  std::vector<passes::EngineSupport> out;
  for (auto& e : passes::engine_support(s))
    if (engine.empty() || e.engine == engine) out.push_back(std::move(e));
  return out;
}

onnx::ModelProto read_model(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open the model");
  std::stringstream bytes;
  bytes << in.rdbuf();
  onnx::ModelProto model;
  if (!model.ParseFromString(bytes.str()))
    throw InputError(path +
                     ": not an ONNX model (protobuf parse failed: truncated or another format)");
  return model;
}

nlohmann::ordered_json to_json(const passes::PlanSummary& s,
                               const std::vector<passes::LayerReport>& layers,
                               const std::vector<passes::EngineSupport>& engines) {
  nlohmann::ordered_json out;
  out["plan_sha256"] = s.plan_sha256;
  out["model_sha256"] = s.model_sha256;
  out["solver"] = s.solver;
  out["solver_status"] = s.solver_status;
  out["device"] = s.device;
  out["dims"] = s.dims;
  out["budget_bytes"] = s.budget_bytes;
  out["predicted_peak_bytes"] = s.predicted_peak_bytes;
  out["predicted_iteration_seconds"] = s.predicted_iteration_seconds;
  out["baseline_peak_bytes"] = s.baseline_peak_bytes;
  out["baseline_iteration_seconds"] = s.baseline_iteration_seconds;
  out["swap_outs"] = s.swap_outs;
  out["swap_ins"] = s.swap_ins;
  out["recomputes"] = s.recomputes;
  out["anchors"] = s.anchors;
  auto& realised = out["engines"] = nlohmann::ordered_json::array();
  for (const auto& e : engines)
    realised.push_back({{"engine", e.engine}, {"recomputes", e.recomputes}, {"swaps", e.swaps}});
  auto& rows = out["layers"] = nlohmann::ordered_json::array();
  for (const auto& l : layers) {
    nlohmann::ordered_json row;
    row["layer"] = l.layer;
    row["swaps"] = nlohmann::ordered_json::array();
    for (const auto& sw : l.swaps)
      row["swaps"].push_back({{"tensor", sw.tensor}, {"reloads", sw.reloads}});
    row["recomputes"] = nlohmann::ordered_json::array();
    for (const auto& r : l.recomputes)
      row["recomputes"].push_back({{"node", r.node}, {"clones", r.clones}});
    rows.push_back(std::move(row));
  }
  return out;
}

void print_engines(const std::vector<passes::EngineSupport>& engines) {
  for (const auto& e : engines)
    std::cout << "engine     " << e.engine << ": recomputes: " << e.recomputes << "\n           "
              << std::string(e.engine.size() + 2, ' ') << "swaps: " << e.swaps << "\n";
}

void print_text(const std::string& path, const passes::PlanSummary& s,
                const std::vector<passes::LayerReport>& layers,
                const std::vector<passes::EngineSupport>& engines) {
  const double overhead = s.baseline_iteration_seconds > 0
                              ? s.predicted_iteration_seconds / s.baseline_iteration_seconds - 1.0
                              : 0.0;
  std::cout << path << ": rewritten by memplan from plan " << s.plan_sha256 << "\n"
            << "plan       " << s.solver << " (" << s.solver_status << "), device " << s.device
            << ", dims " << (s.dims.empty() ? "(none)" : s.dims) << ", budget "
            << util::human_bytes(s.budget_bytes) << "\n"
            << "predicted  peak " << util::human_bytes(s.predicted_peak_bytes) << " (baseline "
            << util::human_bytes(s.baseline_peak_bytes) << "), iteration "
            << util::human_seconds(s.predicted_iteration_seconds) << " (baseline "
            << util::human_seconds(s.baseline_iteration_seconds) << ", +" << std::fixed
            << std::setprecision(2) << overhead * 100 << "%)\n"
            << "nodes      " << s.swap_outs << " SwapOut, " << s.swap_ins << " SwapIn, "
            << s.recomputes << " recompute, " << s.anchors << " anchors\n";
  print_engines(engines);
  if (layers.empty()) {
    std::cout << "nothing is swapped or recomputed\n";
    return;
  }
  std::cout << "\n"
            << std::left << std::setw(40) << "layer" << std::right << std::setw(7) << "swaps"
            << std::setw(9) << "reloads" << std::setw(12) << "recomputes"
            << "\n";
  for (const auto& l : layers) {
    std::size_t reloads = 0, clones = 0;
    for (const auto& sw : l.swaps) reloads += sw.reloads;
    for (const auto& r : l.recomputes) clones += r.clones;
    std::cout << std::left << std::setw(40) << l.layer << std::right << std::setw(7)
              << l.swaps.size() << std::setw(9) << reloads << std::setw(12) << clones << "\n";
    for (const auto& sw : l.swaps)
      std::cout << "  swap       " << sw.tensor << " (reloaded " << sw.reloads << "x)\n";
    for (const auto& r : l.recomputes)
      std::cout << "  recompute  " << r.node << " (" << r.clones << "x)\n";
  }
}

void run(const ExplainArgs& a) {
  ModelOptions given;
  given.model = a.model;
  require_training_graph_only(given, "explain");
  onnx::ModelProto model = read_model(a.model);
  auto summary = passes::read_summary(model, a.model);
  if (!summary)
    throw InputError(a.model +
                     ": no memplan summary in metadata_props: not a model that memplan rewrote");
  auto layers = passes::layer_report(model);
  auto engines = engines_for(*summary, a.engine);
  if (a.json)
    std::cout << to_json(*summary, layers, engines).dump(2) << "\n";
  else
    print_text(a.model, *summary, layers, engines);
}

}  // namespace

void add_explain_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "explain", "Show the plan a rewritten model carries: swaps and recomputes by layer");
  auto a = std::make_shared<ExplainArgs>();
  cmd->add_option("model", a->model, "A model written by `memplan rewrite` or `memplan plan`")
      ->required();
  cmd->add_flag("--json", a->json, "Print as JSON");
  cmd->add_option("--engine", a->engine,
                  "Say only what this engine does with the swaps and recomputes: memplan (its "
                  "runtime), ort-cpu or ort-cuda (ONNX Runtime); default: all three")
      ->check(CLI::IsMember(passes::known_engines()));
  cmd->callback([a] { run(*a); });
}

}  // namespace memplan::cli
