#include "planner/plan_validator.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "ir/baseline_memory.h"
#include "ir/liveness.h"
#include "planner/memory_layout.h"
#include "planner/residency.h"
#include "planner/simulator.h"

namespace memplan::planner {
namespace {

// Timing is recomputed in the same order of operations, so agreement is
// usually exact; the tolerance only absorbs a writer that sums differently.
constexpr double kRelativeTolerance = 1e-9;

bool close(double a, double b) {
  if (a == b) return true;
  return std::abs(a - b) <= kRelativeTolerance * std::max(std::abs(a), std::abs(b));
}

std::string quote_name(const std::string& name) { return "'" + name + "'"; }

std::string number(double v) {
  std::ostringstream out;
  out.precision(17);
  out << v;
  return out.str();
}

std::string dims_text(const std::map<std::string, std::int64_t>& dims) {
  std::string out = "{";
  for (const auto& [k, v] : dims) out += (out.size() > 1 ? ", " : "") + k + "=" + std::to_string(v);
  return out + "}";
}

// "step 17 (compute 'MatMul_3')": how a message names a step.
std::string step_label(const ir::Graph& graph, std::size_t index, const Step& step) {
  std::string label = "step " + std::to_string(index) + " (" + std::string(to_string(step.op));
  if (step.on_node() && step.id < graph.nodes().size()) {
    label += " " + quote_name(graph.node(step.id).name);
  } else if (!step.on_node() && step.id < graph.tensors().size()) {
    label += " " + quote_name(graph.tensor(step.id).name);
  }
  return label + ")";
}

Validation invalid(std::int64_t step, std::string message) {
  Validation v;
  v.valid = false;
  v.step = step;
  v.message = std::move(message);
  return v;
}

// initial_host (PLAN_FORMAT's optional key): only state that exists before
// the first step can start on the host, and a graph output must end
// resident, which the key's end rule forbids.
std::string initial_host_problem(const ir::Graph& graph, const Plan& plan) {
  const std::size_t tensors = graph.tensors().size();
  for (std::size_t i = 0; i < plan.initial_host.size(); ++i) {
    const ir::TensorId t = plan.initial_host[i];
    if (t >= tensors)
      return "initial_host: tensor id " + std::to_string(t) + " is not in the graph";
    const ir::Tensor& tensor = graph.tensor(t);
    const std::string name = "initial_host: tensor " + quote_name(tensor.name);
    if (i > 0 && plan.initial_host[i - 1] >= t)
      return name + (plan.initial_host[i - 1] == t ? " is listed twice" : " is out of order");
    if (!tensor.initially_resident())
      return name + " is not a graph input or initializer: only those exist before the first step";
    if (tensor.is_graph_output)
      return name + " is a graph output, which must be resident at the end";
    if (!plan.alias_of.empty() && plan.alias_of[t] != ir::kNoTensor)
      return name + " is an alias: steps name its base " +
             quote_name(graph.tensor(plan.alias_of[t]).name) + ", so list that";
  }
  return {};
}

// The plan-wide rules that do not need a replay: shapes of the per-node and
// per-tensor vectors, dims, node times, tensor bytes and aliases.
std::string structure_problem(const ir::Graph& graph, const Plan& plan) {
  const std::size_t nodes = graph.nodes().size(), tensors = graph.tensors().size();
  if (plan.dims != graph.dims)
    return "model.dims " + dims_text(plan.dims) + " differ from the graph's " +
           dims_text(graph.dims);
  if (plan.node_seconds.size() != nodes)
    return "node_seconds has " + std::to_string(plan.node_seconds.size()) + " entries for " +
           std::to_string(nodes) + " nodes";
  if (plan.tensor_bytes.size() != tensors || plan.decisions.size() != tensors)
    return "tensors has " + std::to_string(plan.tensor_bytes.size()) + " sizes and " +
           std::to_string(plan.decisions.size()) + " decisions for " + std::to_string(tensors) +
           " tensors";
  for (ir::NodeId n = 0; n < nodes; ++n) {
    double s = plan.node_seconds[n];
    if (!std::isfinite(s) || s < 0)
      return "node_seconds of " + quote_name(graph.node(n).name) + " is " + number(s) +
             ", not a finite time >= 0";
  }
  if (std::string problem = alias_problem(graph, plan); !problem.empty()) return problem;
  if (std::string problem = initial_host_problem(graph, plan); !problem.empty()) return problem;
  for (ir::TensorId t = 0; t < tensors; ++t) {
    bool alias = !plan.alias_of.empty() && plan.alias_of[t] != ir::kNoTensor;
    std::uint64_t want = alias ? 0 : graph.tensor(t).bytes;
    if (plan.tensor_bytes[t] != want)
      return "tensor " + quote_name(graph.tensor(t).name) + ": bytes " +
             std::to_string(plan.tensor_bytes[t]) + " in the plan, " + std::to_string(want) +
             (alias ? " for an alias" : " in the graph");
  }
  return {};
}

// The end rule of initial_host: each is back on the host only, with a copy
// of its last written values, ready for the next iteration.
std::string initial_host_end_problem(const ir::Graph& graph, const Plan& plan,
                                     const Residency& residency) {
  for (ir::TensorId t : plan.initial_host) {
    const std::string name = "initial_host tensor " + quote_name(graph.tensor(t).name);
    if (residency.storage_resident(t)) return name + " is resident at the end";
    if (residency.host_copy(t)) continue;
    // Only an in-place write takes a host copy away.
    const ir::NodeId writer = residency.last_write(t);
    return name + " has no host copy made after its last write" +
           (writer == ir::kNoNode ? "" : " (" + quote_name(graph.node(writer).name) + ")");
  }
  return {};
}

// A swap step needs a bandwidth to finish; zero would make its time infinite.
std::string bandwidth_problem(const Plan& plan, const Step& step) {
  if (step.op == StepOp::kSwapOut && !(plan.device.d2h_bytes_per_s > 0))
    return "device.d2h_bytes_per_s is " + number(plan.device.d2h_bytes_per_s) +
           ", so a swap_out never ends";
  if (step.op == StepOp::kSwapIn && !(plan.device.h2d_bytes_per_s > 0))
    return "device.h2d_bytes_per_s is " + number(plan.device.h2d_bytes_per_s) +
           ", so a swap_in never ends";
  return {};
}

}  // namespace

Validation validate(const ir::Graph& graph, const Plan& plan) {
  if (std::string problem = structure_problem(graph, plan); !problem.empty())
    return invalid(-1, problem);

  Residency residency(graph, plan);
  if (residency.bytes_in_use() > plan.budget_bytes)
    return invalid(-1, "the initial state holds " + std::to_string(residency.bytes_in_use()) +
                           " bytes, over budget_bytes " + std::to_string(plan.budget_bytes));
  for (std::size_t i = 0; i < plan.schedule.size(); ++i) {
    const Step& step = plan.schedule[i];
    std::string problem = residency.check(step);
    if (problem.empty()) problem = bandwidth_problem(plan, step);
    if (!problem.empty()) {
      Validation v =
          invalid(static_cast<std::int64_t>(i), step_label(graph, i, step) + ": " + problem);
      v.peak_bytes = residency.peak_bytes();
      return v;
    }
    residency.apply(step);
    if (residency.bytes_in_use() > plan.budget_bytes) {
      Validation v =
          invalid(static_cast<std::int64_t>(i),
                  step_label(graph, i, step) + ": " + std::to_string(residency.bytes_in_use()) +
                      " bytes in use, over budget_bytes " + std::to_string(plan.budget_bytes));
      v.peak_bytes = residency.peak_bytes();
      return v;
    }
  }

  Validation v;
  v.peak_bytes = residency.peak_bytes();
  auto fail = [&](std::string message) {
    Validation f = invalid(-1, std::move(message));
    f.peak_bytes = v.peak_bytes;
    return f;
  };
  for (ir::NodeId n = 0; n < graph.nodes().size(); ++n)
    if (!residency.computed(n))
      return fail("node " + quote_name(graph.node(n).name) + " is never computed");
  for (ir::TensorId t : graph.graph_outputs())
    if (!residency.resident(t))
      return fail("graph output " + quote_name(graph.tensor(t).name) +
                  " is not resident at the end");
  if (std::string problem = initial_host_end_problem(graph, plan, residency); !problem.empty())
    return fail(problem);

  const Predicted& p = plan.predicted;
  if (p.peak_bytes != v.peak_bytes)
    return fail("predicted.peak_bytes is " + std::to_string(p.peak_bytes) +
                "; the schedule's peak is " + std::to_string(v.peak_bytes));
  SimResult sim = simulate(graph, plan);
  if (!close(p.iteration_seconds, sim.iteration_seconds))
    return fail("predicted.iteration_seconds is " + number(p.iteration_seconds) +
                "; the timing rules give " + number(sim.iteration_seconds));
  if (!close(p.compute_seconds, sim.compute_seconds))
    return fail("predicted.compute_seconds is " + number(p.compute_seconds) +
                "; the compute and recompute steps sum to " + number(sim.compute_seconds));
  std::uint64_t baseline_peak = ir::baseline_memory(graph, ir::Liveness(graph)).peak_bytes;
  if (p.baseline_peak_bytes != baseline_peak)
    return fail("predicted.baseline_peak_bytes is " + std::to_string(p.baseline_peak_bytes) +
                "; the baseline's peak is " + std::to_string(baseline_peak));
  double baseline_seconds = 0;
  for (double s : plan.node_seconds) baseline_seconds += s;
  if (!close(p.baseline_iteration_seconds, baseline_seconds))
    return fail("predicted.baseline_iteration_seconds is " + number(p.baseline_iteration_seconds) +
                "; node_seconds sum to " + number(baseline_seconds));
  if (plan.memory_layout) {
    std::string problem = memory_layout_problem(graph, plan, *plan.memory_layout);
    if (problem.empty()) problem = arena_budget_problem(plan, *plan.memory_layout);
    if (!problem.empty()) return fail(problem);
  }
  return v;
}

}  // namespace memplan::planner
