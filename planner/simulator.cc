#include "planner/simulator.h"

#include <algorithm>
#include <limits>

#include "planner/residency.h"

namespace memplan::planner {
namespace {

Stream stream_of(StepOp op) {
  switch (op) {
    case StepOp::kSwapOut:
      return Stream::kD2H;
    case StepOp::kSwapIn:
      return Stream::kH2D;
    default:
      return Stream::kCompute;
  }
}

// A copy of `bytes` at `bytes_per_s`; a zero bandwidth never finishes (the
// validator rejects such plans before asking for their timing).
double transfer_seconds(std::uint64_t bytes, double bytes_per_s) {
  if (bytes == 0) return 0;
  if (bytes_per_s <= 0) return std::numeric_limits<double>::infinity();
  return static_cast<double>(bytes) / bytes_per_s;
}

}  // namespace

SimResult simulate(const ir::Graph& graph, const Plan& plan) {
  const std::size_t tensor_count = graph.tensors().size();
  Residency residency(graph, plan);
  // End of the step that last made each tensor resident: 0 for the tensors
  // resident at the start. For an alias, its producer's compute; the base's
  // own entry covers later swap_ins.
  std::vector<double> made_end(tensor_count, 0.0);
  // End of the latest swap_out of each tensor (the d2h stream is in order,
  // so the latest issued ends last).
  std::vector<double> swap_out_end(tensor_count, 0.0);
  double last_free_end = 0;
  std::array<double, 3> stream_end{};

  auto bytes_of = [&](ir::TensorId t) -> std::uint64_t {
    return t < plan.tensor_bytes.size() ? plan.tensor_bytes[t] : 0;
  };
  auto ready = [&](ir::TensorId t) { return std::max(made_end[t], made_end[residency.base(t)]); };

  SimResult r;
  r.steps.reserve(plan.schedule.size());
  r.peak_bytes = residency.bytes_in_use();
  std::vector<ir::TensorId> newly_resident;
  for (const Step& step : plan.schedule) {
    StepTiming timing;
    timing.stream = stream_of(step.op);
    double depends_on = 0;
    double duration = 0;
    newly_resident.clear();
    const bool known = step.on_node() ? step.id < graph.nodes().size() : step.id < tensor_count;
    if (known) {
      switch (step.op) {
        case StepOp::kCompute:
        case StepOp::kRecompute: {
          const ir::Node& node = graph.node(step.id);
          for (ir::TensorId in : node.inputs) depends_on = std::max(depends_on, ready(in));
          duration = step.id < plan.node_seconds.size() ? plan.node_seconds[step.id] : 0;
          // A recompute makes resident only the outputs that were not.
          for (ir::TensorId out : node.outputs)
            if (step.op == StepOp::kCompute || !residency.resident(out))
              newly_resident.push_back(out);
          break;
        }
        case StepOp::kSwapOut:
          depends_on = ready(step.id);
          duration = transfer_seconds(bytes_of(step.id), plan.device.d2h_bytes_per_s);
          break;
        case StepOp::kSwapIn:
          depends_on = last_free_end;
          duration = transfer_seconds(bytes_of(step.id), plan.device.h2d_bytes_per_s);
          newly_resident.push_back(step.id);
          break;
        case StepOp::kFree:
          depends_on = swap_out_end[step.id];
          break;
      }
    }
    const auto s = static_cast<std::size_t>(timing.stream);
    timing.start = std::max(stream_end[s], depends_on);
    timing.end = timing.start + duration;
    r.stall_seconds[s] += timing.start - stream_end[s];
    stream_end[s] = timing.end;

    for (ir::TensorId t : newly_resident) made_end[t] = timing.end;
    if (known && step.op == StepOp::kSwapOut)
      swap_out_end[step.id] = std::max(swap_out_end[step.id], timing.end);
    if (step.op == StepOp::kFree) last_free_end = std::max(last_free_end, timing.end);
    if (step.on_node()) r.compute_seconds += duration;

    residency.apply(step);
    timing.bytes_in_use_after = residency.bytes_in_use();
    r.peak_bytes = std::max(r.peak_bytes, timing.bytes_in_use_after);
    r.iteration_seconds = std::max(r.iteration_seconds, timing.end);
    r.steps.push_back(timing);
  }
  return r;
}

}  // namespace memplan::planner
