#include "cli/model_inputs.h"

#include <chrono>
#include <functional>
#include <future>
#include <iostream>
#include <thread>

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

// What --costs or --profile gives, read on a thread of its own.
struct CostsRead {
  std::optional<ir::CostsFile> file;  // --costs
  std::map<std::string, double> measured;
  std::string source;  // empty: the device's roofline

  std::map<std::string, std::uint64_t> tensor_bytes() const {
    return file ? file->tensor_bytes : std::map<std::string, std::uint64_t>{};
  }
};

CostsRead read_costs(const ModelOptions& options, double& seconds) {
  const auto start = std::chrono::steady_clock::now();
  // Also where the read throws: --timings prints its stage either way.
  struct Stopwatch {
    std::chrono::steady_clock::time_point start;
    double& seconds;
    ~Stopwatch() {
      seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
  } watch{start, seconds};
  CostsRead out;
  if (!options.costs.empty()) {
    out.file = ir::read_costs_file(options.costs);
    out.measured = out.file->node_seconds;
    out.source = "memplan.costs " + options.costs;
  } else if (!options.profile.empty()) {
    out.measured = ir::read_ort_profile(options.profile).node_seconds;
    out.source = "ort-profile " + options.profile;
  }
  return out;
}

// The costs read on another thread from construction; get() joins it
// (the thread is gone, not only done, before the loader forks) and returns
// what it read or rethrows what it threw, each time; the first time, it
// records the read_costs stage.
class CostsAlongside {
 public:
  explicit CostsAlongside(const ModelOptions& options)
      : task_([&options, this] { return read_costs(options, seconds_); }),
        read_(task_.get_future().share()),
        thread_(std::move(task_)) {}

  const CostsRead& get(StageTimer& timer) {
    if (thread_.joinable()) {
      thread_.join();
      timer.add("read_costs", seconds_, "--costs or --profile file");
    }
    return read_.get();
  }

 private:
  double seconds_ = 0;  // written by the reading thread, read after the join
  std::packaged_task<CostsRead()> task_;
  std::shared_future<CostsRead> read_;
  std::jthread thread_;
};

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
  // The costs file does not depend on the model: it is read while the model
  // is read and checked (synth100k: 0.21 s beside a 1.36 s load); the loader
  // waits for it before shape inference, which forks.
  CostsAlongside costs(options);
  load.tensor_bytes_later = [&] { return costs.get(timer).tensor_bytes(); };
  std::vector<std::string> found;
  try {
    const ir::ModelSources sources = ir::model_sources(options.model, options.optimizer, found);
    timer.time("load_model", "read, dims, shapes, DAG check, classify",
               [&] { in.model = ir::load_sources(sources, load); });
  } catch (...) {
    costs.get(timer);  // its error first, as when the costs were read before the model
    throw;
  }
  const CostsRead& read = costs.get(timer);
  in.warnings = std::move(found);
  in.warnings.insert(in.warnings.end(), in.model.warnings.begin(), in.model.warnings.end());
  if (read.file) {
    device = ir::apply_overrides(device, *read.file);
    for (const auto& [name, bytes] : read.file->tensor_bytes)
      if (!in.model.graph.find_tensor(name))
        in.warnings.push_back(options.costs + ": tensor '" + name +
                              "' is not in the graph (ignored)");
  }
  const std::string source = read.source.empty() ? "roofline " + device.name : read.source;
  timer.time("node_costs", "per-node times (roofline or measured)", [&] {
    in.costs = ir::make_node_costs(in.model.graph, device, read.measured, source, in.warnings);
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
