#include "cli/model_inputs.h"

#include <iostream>

#include "ir/costs_file.h"
#include "ir/device_presets.h"
#include "ir/node_costs.h"
#include "ir/ort_artifacts.h"
#include "ir/ort_profile.h"
#include "util/errors.h"

namespace memplan::cli {
namespace {

std::map<std::string, std::int64_t> parse_dims(const std::vector<std::string>& dims) {
  std::map<std::string, std::int64_t> out;
  for (const auto& d : dims) {
    auto eq = d.find('=');
    if (eq == std::string::npos || eq == 0)
      throw UsageError("--dim '" + d + "': expected NAME=VALUE, e.g. --dim batch=32");
    std::string name = d.substr(0, eq);
    std::string value = d.substr(eq + 1);
    std::size_t pos = 0;
    long long v = 0;
    try {
      v = std::stoll(value, &pos);
    } catch (const std::exception&) {
      pos = 0;
    }
    // A dim of 0 makes every tensor along it empty: no training step.
    if (value.empty() || pos != value.size() || v < 1)
      throw UsageError("--dim " + name + ": '" + value + "' is not a positive integer");
    if (const auto [it, fresh] = out.emplace(name, v); !fresh)
      throw UsageError("--dim " + name + " is given twice (" + std::to_string(it->second) +
                       " and " + value + ")");
  }
  return out;
}

}  // namespace

void ModelOptions::add_to(CLI::App& cmd) {
  cmd.add_option("model", model,
                 "ONNX training graph (.onnx), or ONNX Runtime's artifacts folder "
                 "(training_model.onnx + optimizer_model.onnx: the optimizer step included)")
      ->required();
  cmd.add_option("--optimizer", optimizer,
                 "ONNX Runtime's optimizer_model.onnx (AdamW) for a training graph file: "
                 "its step per parameter and moments are modelled");
  cmd.add_option("--dim", dims, "Bind a symbolic dim, e.g. --dim batch=32 (repeatable)");
  auto* c = cmd.add_option("--costs", costs, "Per-node times in memplan.costs JSON");
  auto* p = cmd.add_option("--profile", profile, "ONNX Runtime profiler JSON for per-node times");
  c->excludes(p);
  cmd.add_option("--device", device, "Device preset (see `memplan devices`)")
      ->capture_default_str();
  cmd.add_option("--loss", loss, "Name of the loss tensor (default: the scalar graph output)");
}

ModelInputs load_inputs(const ModelOptions& options) {
  StageTimer unused;
  return load_inputs(options, unused);
}

ModelInputs load_inputs(const ModelOptions& options, StageTimer& timer) {
  ModelInputs in;
  ir::LoadOptions load;
  load.dims = parse_dims(options.dims);
  if (!options.loss.empty()) load.loss = options.loss;

  ir::DeviceSpec device = ir::device_preset(options.device);
  std::map<std::string, double> measured;
  std::string source = "roofline " + device.name;
  std::optional<ir::CostsFile> costs_file;
  timer.time("read_costs", "--costs or --profile file", [&] {
    if (!options.costs.empty()) {
      costs_file = ir::read_costs_file(options.costs);
      load.tensor_bytes = costs_file->tensor_bytes;
      device = ir::apply_overrides(device, *costs_file);
      measured = costs_file->node_seconds;
      source = "memplan.costs " + options.costs;
    } else if (!options.profile.empty()) {
      measured = ir::read_ort_profile(options.profile).node_seconds;
      source = "ort-profile " + options.profile;
    }
  });

  std::vector<std::string> found;
  const ir::ModelSources sources = ir::model_sources(options.model, options.optimizer, found);
  timer.time("load_model", "read, dims, shapes, DAG check, classify",
             [&] { in.model = ir::load_sources(sources, load); });
  in.warnings = std::move(found);
  in.warnings.insert(in.warnings.end(), in.model.warnings.begin(), in.model.warnings.end());
  if (costs_file) {
    for (const auto& [name, bytes] : costs_file->tensor_bytes)
      if (!in.model.graph.find_tensor(name))
        in.warnings.push_back(options.costs + ": tensor '" + name +
                              "' is not in the graph (ignored)");
  }
  timer.time("node_costs", "per-node times (roofline or measured)", [&] {
    in.costs = ir::make_node_costs(in.model.graph, device, measured, source, in.warnings);
  });
  return in;
}

void require_training_graph_only(const ModelOptions& options, const std::string& command) {
  std::vector<std::string> ignored;
  const ir::ModelSources s = ir::model_sources(options.model, options.optimizer, ignored);
  if (s.optimizer.empty() && !s.folder) return;
  const std::string what = s.folder ? options.model + " (an artifacts folder)"
                                    : options.model + " with --optimizer " + options.optimizer;
  throw InputError("memplan " + command + ": " + what +
                   ": rewriting ONNX Runtime's optimizer model is not done; " + command +
                   " takes one model file (the training graph alone is " + s.training + ")");
}

void dims_from_plan(const nlohmann::json& doc, ModelOptions& model) {
  if (!model.dims.empty() || !doc.is_object()) return;
  auto m = doc.find("model");
  if (m == doc.end() || !m->is_object()) return;
  auto dims = m->find("dims");
  if (dims == m->end() || !dims->is_object()) return;
  for (const auto& [name, value] : dims->items())
    if (value.is_number_unsigned())
      model.dims.push_back(name + "=" + std::to_string(value.get<std::uint64_t>()));
}

void print_warnings(const std::vector<std::string>& warnings) {
  for (const auto& w : warnings) std::cerr << "memplan: warning: " << w << "\n";
}

}  // namespace memplan::cli
