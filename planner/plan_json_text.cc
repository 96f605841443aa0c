// plan.json streamed as text (plan_file_text): the same bytes as
// plan_to_json(...).dump(2), without the document, which at 100k nodes
// held several times the file's size in memory.
#include <cmath>

#include "planner/plan_json.h"
#include "planner/plan_json_checks.h"
#include "util/errors.h"
#include "util/json_text_writer.h"

namespace memplan::planner {
namespace {

using util::JsonTextWriter;
using namespace plan_json_checks;

// Keys in PLAN_FORMAT.md's order, as plan_to_json() puts them, and the
// numbers checked in the same order, so the same plan fails the same way.
void header(util::JsonTextWriter& w, const Plan& plan) {
  w.member("format", kPlanFormat).member("version", kPlanVersion);
  w.key("model").begin_object().member("path", plan.model_path);
  w.member("sha256", plan.model_sha256).key("dims").begin_object();
  for (const auto& [name, value] : plan.dims) w.member(name, value);
  w.end_object().end_object();
  w.key("device").begin_object().member("name", plan.device.name);
  w.member("memory_bytes", plan.device.memory_bytes);
  w.member("h2d_bytes_per_s", finite(plan.device.h2d_bytes_per_s, "device.h2d_bytes_per_s"));
  w.member("d2h_bytes_per_s", finite(plan.device.d2h_bytes_per_s, "device.d2h_bytes_per_s"));
  w.end_object().member("budget_bytes", plan.budget_bytes);
}

void solver(util::JsonTextWriter& w, const SolverInfo& s) {
  w.key("solver").begin_object().member("name", s.name).member("status", s.status);
  w.member("objective_seconds", finite(s.objective_seconds, "solver.objective_seconds"));
  w.key("bound_seconds");
  if (s.bound_seconds) {
    w.value(finite(*s.bound_seconds, "solver.bound_seconds"));
  } else {
    w.value(nullptr);
  }
  w.member("solve_seconds", finite(s.solve_seconds, "solver.solve_seconds")).end_object();
}

void node_seconds(util::JsonTextWriter& w, const ir::Graph& graph, const Plan& plan) {
  w.key("node_seconds").begin_object();
  for (ir::NodeId n = 0; n < graph.nodes().size(); ++n) {
    const std::string& name = graph.node(n).name;
    const double v = plan.node_seconds[n];
    // The key names the node only on failure: quoting 100k names cost more
    // than writing them.
    w.member(name, std::isfinite(v) ? v : finite(v, "node_seconds." + quote_name(name)));
  }
  w.end_object();
}

void tensors_and_schedule(util::JsonTextWriter& w, const ir::Graph& graph, const Plan& plan) {
  w.key("tensors").begin_array();
  for (ir::TensorId t = 0; t < graph.tensors().size(); ++t) {
    const ir::Tensor& tensor = graph.tensor(t);
    w.begin_object().member("name", tensor.name).member("bytes", plan.tensor_bytes[t]);
    w.member("class", ir::to_string(tensor.cls)).member("decision", to_string(plan.decisions[t]));
    if (!plan.alias_of.empty() && plan.alias_of[t] != ir::kNoTensor)
      w.member("alias_of", graph.tensor(plan.alias_of.at(t)).name);
    w.end_object();
  }
  w.end_array();
  // As plan_to_json(): only when there is one.
  if (!plan.initial_host.empty()) {
    w.key("initial_host").begin_array();
    for (ir::TensorId t : plan.initial_host) w.value(graph.tensor(t).name);
    w.end_array();
  }
  w.key("schedule").begin_array();
  for (const Step& s : plan.schedule) {
    w.begin_object().member("op", to_string(s.op));
    if (s.on_node()) {
      w.member("node", graph.node(s.id).name);
    } else {
      w.member("tensor", graph.tensor(s.id).name);
    }
    w.end_object();
  }
  w.end_array();
}

void predicted(util::JsonTextWriter& w, const Predicted& p) {
  w.key("predicted").begin_object().member("peak_bytes", p.peak_bytes);
  w.member("iteration_seconds", finite(p.iteration_seconds, "predicted.iteration_seconds"));
  w.member("compute_seconds", finite(p.compute_seconds, "predicted.compute_seconds"));
  w.member("baseline_peak_bytes", p.baseline_peak_bytes);
  w.member("baseline_iteration_seconds",
           finite(p.baseline_iteration_seconds, "predicted.baseline_iteration_seconds"));
  w.end_object();
}

void memory_layout(util::JsonTextWriter& w, const ir::Graph& graph, const MemoryLayout& m,
                   std::uint64_t budget) {
  w.key("memory_layout").begin_object().member("alignment", m.alignment);
  w.member("arena_bytes", m.arena_bytes).member("peak_bytes", m.peak_bytes);
  w.member("fragmentation", finite(m.fragmentation(), "memory_layout.fragmentation"));
  // Added keys (PLAN_FORMAT allows them), as plan_to_json writes them.
  w.member("fragmentation_bytes", m.arena_bytes > m.peak_bytes ? m.arena_bytes - m.peak_bytes : 0);
  w.member("fits_budget", m.arena_bytes <= budget);
  if (m.arena_bytes > budget) w.member("over_budget_bytes", m.arena_bytes - budget);
  w.key("allocations").begin_array();
  for (const Allocation& a : m.allocations) {
    if (a.tensor >= graph.tensors().size())
      throw InvalidPlanError("plan: memory_layout names tensor id " + std::to_string(a.tensor) +
                             ", not in the graph");
    w.begin_object().member("step", a.step).member("tensor", graph.tensor(a.tensor).name);
    w.member("offset", a.offset).member("bytes", a.bytes).end_object();
  }
  w.end_array().end_object();
}

}  // namespace

std::string plan_file_text(const ir::Graph& graph, const Plan& plan) {
  check_fits(graph, plan);
  std::string text;
  // dump(2) with the strict handler: a name that is not UTF-8 throws, as
  // it did from the document.
  util::JsonTextWriter w(text, 2, false);
  w.begin_object();
  header(w, plan);
  solver(w, plan.solver);
  node_seconds(w, graph, plan);
  tensors_and_schedule(w, graph, plan);
  predicted(w, plan.predicted);
  if (plan.memory_layout) memory_layout(w, graph, *plan.memory_layout, plan.budget_bytes);
  w.end_object();
  text += '\n';
  return text;
}

}  // namespace memplan::planner
