// `memplan inspect`: what the loader and the baseline analysis see.
#include <algorithm>
#include <array>
#include <iomanip>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/model_inputs.h"
#include "ir/baseline_memory.h"
#include "ir/liveness.h"
#include "util/units.h"

namespace memplan::cli {
namespace {

using nlohmann::ordered_json;

// Graph inputs and initializers by class: resident from the first step to
// the last in the baseline, whatever the schedule (parameters, gradient
// buffers, the optimizer's moments), with their total.
ordered_json resident_throughout(const ir::Graph& g) {
  std::array<std::uint64_t, ir::kTensorClassCount> bytes{};
  std::uint64_t total = 0;
  for (const ir::Tensor& t : g.tensors()) {
    if (!t.initially_resident()) continue;
    bytes[static_cast<int>(t.cls)] += t.bytes;
    total += t.bytes;
  }
  ordered_json r = ordered_json::object();
  for (auto c : {ir::TensorClass::kParameter, ir::TensorClass::kGradient,
                 ir::TensorClass::kOptimizerState, ir::TensorClass::kInput})
    r[std::string(ir::to_string(c))] = bytes[static_cast<int>(c)];
  r["total"] = total;
  return r;
}

// The files read; `optimizer` null for a training graph alone.
ordered_json model_json(const ir::LoadedModel& m) {
  ordered_json r = {{"path", m.path}, {"sha256", m.sha256}, {"dims", m.graph.dims}};
  r["optimizer"] = m.optimizer ? ordered_json{{"path", m.optimizer->path},
                                              {"sha256", m.optimizer->sha256},
                                              {"steps", m.optimizer->steps}}
                               : ordered_json(nullptr);
  return r;
}

ordered_json inspect_report(const ModelInputs& in) {
  const ir::Graph& g = in.model.graph;
  ir::Liveness liveness(g);
  ir::BaselineMemory base = ir::baseline_memory(g, liveness);

  std::size_t forward = 0;
  double forward_s = 0, backward_s = 0;
  for (ir::NodeId i = 0; i < g.nodes().size(); ++i) {
    if (g.node(i).is_forward) {
      ++forward;
      forward_s += in.costs.seconds[i];
    } else {
      backward_s += in.costs.seconds[i];
    }
  }
  ordered_json r;
  r["model"] = model_json(in.model);
  r["nodes"] = g.nodes().size();
  r["tensors"] = g.tensors().size();
  r["forward_nodes"] = forward;
  r["backward_nodes"] = g.nodes().size() - forward;
  r["loss"] = g.loss == ir::kNoTensor ? ordered_json(nullptr) : ordered_json(g.tensor(g.loss).name);

  ordered_json peak;
  peak["bytes"] = base.peak_bytes;
  peak["human"] = util::human_bytes(base.peak_bytes);
  peak["step"] = base.peak_step;
  if (base.peak_step >= 0) {
    const auto& n = g.node(static_cast<ir::NodeId>(base.peak_step));
    peak["node"] = n.name;
    peak["op"] = n.op_type;
    peak["phase"] = n.is_forward ? "forward" : "backward";
  }
  ordered_json by_class = ordered_json::object();
  for (int c = 0; c < ir::kTensorClassCount; ++c)
    by_class[std::string(ir::to_string(static_cast<ir::TensorClass>(c)))] = base.peak_by_class[c];
  peak["by_class"] = by_class;
  r["baseline_peak"] = peak;

  ordered_json totals = ordered_json::object();
  std::array<std::uint64_t, ir::kTensorClassCount> bytes{};
  std::array<std::size_t, ir::kTensorClassCount> counts{};
  std::vector<ir::TensorId> activations;
  for (ir::TensorId t = 0; t < g.tensors().size(); ++t) {
    auto c = static_cast<int>(g.tensor(t).cls);
    bytes[c] += g.tensor(t).bytes;
    ++counts[c];
    if (g.tensor(t).cls == ir::TensorClass::kActivation) activations.push_back(t);
  }
  for (int c = 0; c < ir::kTensorClassCount; ++c)
    totals[std::string(ir::to_string(static_cast<ir::TensorClass>(c)))] = {{"count", counts[c]},
                                                                           {"bytes", bytes[c]}};
  r["classes"] = totals;
  r["resident_throughout"] = resident_throughout(g);

  std::stable_sort(activations.begin(), activations.end(),
                   [&](auto a, auto b) { return g.tensor(a).bytes > g.tensor(b).bytes; });
  ordered_json largest = ordered_json::array();
  for (std::size_t i = 0; i < activations.size() && i < 10; ++i) {
    const auto& t = g.tensor(activations[i]);
    largest.push_back({{"name", t.name},
                       {"bytes", t.bytes},
                       {"shape", t.shape},
                       {"producer", g.node(t.producer).name},
                       {"live_steps", liveness.last_use_step(activations[i]) -
                                          liveness.def_step(activations[i])}});
  }
  r["largest_activations"] = largest;
  r["costs"] = {{"source", in.costs.source},
                {"device", in.costs.device.name},
                {"measured_nodes", in.costs.measured},
                {"modelled_nodes", in.costs.modelled},
                {"forward_seconds", forward_s},
                {"backward_seconds", backward_s},
                {"iteration_seconds", in.costs.total_seconds()}};
  return r;
}

void print_text(const ordered_json& r, std::ostream& out) {
  out << "model      " << r["model"]["path"].get<std::string>() << "\n";
  if (!r["model"]["dims"].empty()) {
    out << "dims      ";
    for (const auto& [k, v] : r["model"]["dims"].items()) out << " " << k << "=" << v;
    out << "\n";
  }
  out << "nodes      " << r["nodes"] << " (" << r["forward_nodes"] << " forward, "
      << r["backward_nodes"] << " backward)\n";
  out << "tensors    " << r["tensors"] << "\n";
  out << "loss       " << (r["loss"].is_null() ? "(none)" : r["loss"].get<std::string>()) << "\n";
  const auto& opt = r["model"]["optimizer"];
  if (opt.is_null()) {
    out << "optimizer  (none: give the artifacts folder or --optimizer to model its state)\n";
  } else {
    out << "optimizer  " << opt["path"].get<std::string>() << " (" << opt["steps"]
        << " AdamW steps, one per trainable parameter)\n";
  }
  const auto& p = r["baseline_peak"];
  out << "baseline peak  " << p["bytes"] << " bytes (" << p["human"].get<std::string>() << ")";
  if (p.contains("node"))
    out << " after step " << p["step"] << ", " << p["phase"].get<std::string>() << " node '"
        << p["node"].get<std::string>() << "' (" << p["op"].get<std::string>() << ")";
  out << "\n\nresident at the peak, by class:\n";
  for (const auto& [cls, b] : p["by_class"].items()) {
    if (b.get<std::uint64_t>() == 0) continue;
    out << "  " << std::left << std::setw(16) << cls << std::right << std::setw(12)
        << util::human_bytes(b.get<std::uint64_t>()) << "\n";
  }
  out << "\nresident the whole iteration (graph inputs), by class:\n";
  for (const auto& [cls, b] : r["resident_throughout"].items())
    out << "  " << std::left << std::setw(16) << cls << std::right << std::setw(12)
        << util::human_bytes(b.get<std::uint64_t>()) << "\n";
  out << "\nall tensors, by class:\n";
  std::uint64_t count = 0, bytes = 0;
  for (const auto& [cls, v] : r["classes"].items()) {
    out << "  " << std::left << std::setw(16) << cls << std::right << std::setw(7) << v["count"]
        << " tensors " << std::setw(12) << util::human_bytes(v["bytes"].get<std::uint64_t>())
        << "\n";
    count += v["count"].get<std::uint64_t>();
    bytes += v["bytes"].get<std::uint64_t>();
  }
  out << "  " << std::left << std::setw(16) << "total" << std::right << ordered_json(count)
      << " tensors " << std::setw(12) << util::human_bytes(bytes) << "\n";
  out << "\nlargest activations:\n";
  for (const auto& a : r["largest_activations"]) {
    out << "  " << std::setw(12) << util::human_bytes(a["bytes"].get<std::uint64_t>()) << "  "
        << a["name"].get<std::string>() << " " << a["shape"].dump() << " from '"
        << a["producer"].get<std::string>() << "', live " << a["live_steps"] << " steps\n";
  }
  const auto& c = r["costs"];
  out << "\ncompute    " << util::human_seconds(c["iteration_seconds"].get<double>())
      << " per iteration (" << util::human_seconds(c["forward_seconds"].get<double>())
      << " forward, " << util::human_seconds(c["backward_seconds"].get<double>())
      << " backward) on " << c["device"].get<std::string>() << "; " << c["measured_nodes"]
      << " nodes measured, " << c["modelled_nodes"] << " modelled ("
      << c["source"].get<std::string>() << ")\n";
}

// Every tensor's element type and shape, as the loader inferred them: what
// the tests hold against the shapes ONNX Runtime actually produces.
ordered_json tensor_shapes(const ir::Graph& g) {
  ordered_json shapes = ordered_json::object();
  for (const ir::Tensor& t : g.tensors())
    shapes[t.name] = {{"elem_type", t.elem_type}, {"shape", t.shape}, {"bytes", t.bytes}};
  return shapes;
}

void run_inspect(const ModelOptions& opts, bool json, bool shapes, StageTimer& timer) {
  ModelInputs in = load_inputs(opts, timer);
  print_warnings(in.warnings);
  auto report = timer.time("analysis", "liveness, baseline peak, classes, largest activations",
                           [&] { return inspect_report(in); });
  if (shapes) report["tensor_shapes"] = tensor_shapes(in.model.graph);
  timer.time("print", "the report on stdout", [&] {
    if (json) {
      std::cout << report.dump(2) << "\n";
    } else {
      print_text(report, std::cout);
    }
  });
}

}  // namespace

void add_inspect_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("inspect", "Load a training graph and report its baseline memory");
  auto opts = std::make_shared<ModelOptions>();
  auto json = std::make_shared<bool>(false);
  auto shapes = std::make_shared<bool>(false);
  opts->add_to(*cmd);
  cmd->add_flag("--json", *json, "Print the report as JSON");
  cmd->add_flag(
      "--shapes", *shapes,
      "With --json: add every tensor's element type, shape and bytes (\"tensor_shapes\")");
  auto timings = std::make_shared<bool>(false);
  cmd->add_flag("--timings", *timings, "Print each stage's wall time on stderr");
  cmd->callback([opts, json, shapes, timings] {
    with_timings(*timings, std::cerr,
                 [&](StageTimer& timer) { run_inspect(*opts, *json, *shapes, timer); });
  });
}

}  // namespace memplan::cli
