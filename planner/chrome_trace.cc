#include "planner/chrome_trace.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "ir/errors.h"
#include "ir/text_file.h"
#include "planner/residency.h"

namespace memplan::planner {
namespace {

using nlohmann::json;

constexpr int kPid = 1;
constexpr double kMicros = 1e6;

// Trace tids start at 1: some viewers treat tid 0 as "no thread".
int tid_of(Stream s) { return static_cast<int>(s) + 1; }

const char* stream_label(Stream s) {
  switch (s) {
    case Stream::kCompute:
      return "compute";
    case Stream::kD2H:
      return "device->host (swap_out)";
    case Stream::kH2D:
      return "host->device (swap_in)";
  }
  return "?";
}

// The signed change in device bytes step i made, in issue order.
std::int64_t delta_of(const SimResult& sim, std::size_t i, std::uint64_t initial) {
  std::uint64_t before = i == 0 ? initial : sim.steps[i - 1].bytes_in_use_after;
  return static_cast<std::int64_t>(sim.steps[i].bytes_in_use_after) -
         static_cast<std::int64_t>(before);
}

std::uint64_t tensor_bytes(const ir::Graph& graph, const Plan& plan, ir::TensorId t) {
  if (t < plan.tensor_bytes.size()) return plan.tensor_bytes[t];
  return t < graph.tensors().size() ? graph.tensor(t).bytes : 0;
}

std::string step_name(const ir::Graph& graph, const Step& step) {
  if (step.on_node()) return step.id < graph.nodes().size() ? graph.node(step.id).name : "?";
  return step.id < graph.tensors().size() ? graph.tensor(step.id).name : "?";
}

json metadata(const char* what, int tid, json args) {
  json e = {{"ph", "M"}, {"name", what}, {"pid", kPid}, {"args", std::move(args)}};
  if (tid >= 0) e["tid"] = tid;
  return e;
}

json counter(const char* name, double seconds, std::uint64_t bytes) {
  return {{"ph", "C"},
          {"name", name},
          {"pid", kPid},
          {"ts", seconds * kMicros},
          {"args", {{"bytes", bytes}}}};
}

}  // namespace

std::vector<MemoryPoint> memory_timeline(const ir::Graph& graph, const Plan& plan,
                                         const SimResult& sim) {
  const std::uint64_t initial = Residency(graph, plan).bytes_in_use();
  struct Change {
    double seconds;
    std::int64_t delta;
  };
  std::vector<Change> changes;
  changes.reserve(sim.steps.size());
  for (std::size_t i = 0; i < sim.steps.size(); ++i) {
    std::int64_t d = delta_of(sim, i, initial);
    if (d == 0) continue;
    // Memory is taken when a step begins writing and given back when it is
    // done, so the curve never shows a buffer as free while still in use.
    changes.push_back({d > 0 ? sim.steps[i].start : sim.steps[i].end, d});
  }
  std::stable_sort(changes.begin(), changes.end(),
                   [](const Change& a, const Change& b) { return a.seconds < b.seconds; });
  std::vector<MemoryPoint> points;
  points.reserve(changes.size() + 1);
  points.push_back({0.0, initial});
  auto in_use = static_cast<std::int64_t>(initial);
  for (const Change& c : changes) {
    in_use += c.delta;
    // Placing a free by time can put it before the start of the allocation
    // it releases (a swap_in freed with no reader between); the count must
    // not wrap below zero in that instant.
    points.push_back({c.seconds, static_cast<std::uint64_t>(std::max<std::int64_t>(in_use, 0))});
  }
  return points;
}

json chrome_trace(const ir::Graph& graph, const Plan& plan, const SimResult& sim) {
  json events = json::array();
  std::string process = "memplan plan";
  if (!plan.model_path.empty()) process += ": " + plan.model_path;
  events.push_back(metadata("process_name", -1, {{"name", process}}));
  for (Stream s : {Stream::kCompute, Stream::kD2H, Stream::kH2D}) {
    events.push_back(metadata("thread_name", tid_of(s), {{"name", stream_label(s)}}));
    // Keeps the tracks in stream order rather than by first event.
    events.push_back(metadata("thread_sort_index", tid_of(s), {{"sort_index", tid_of(s)}}));
  }

  const std::uint64_t initial = Residency(graph, plan).bytes_in_use();
  const std::size_t n = std::min(plan.schedule.size(), sim.steps.size());
  for (std::size_t i = 0; i < n; ++i) {
    const Step& step = plan.schedule[i];
    const StepTiming& t = sim.steps[i];
    json args = {{"step", i}, {"in_use_after", t.bytes_in_use_after}};
    if (step.on_node()) {
      // What the step allocated: all outputs for a compute, the missing ones
      // for a recompute.
      args["bytes"] = std::max<std::int64_t>(delta_of(sim, i, initial), 0);
      if (step.id < graph.nodes().size()) args["op_type"] = graph.node(step.id).op_type;
    } else {
      args["bytes"] = tensor_bytes(graph, plan, step.id);
    }
    json e = {{"name", step_name(graph, step)},
              {"cat", std::string(to_string(step.op))},
              {"pid", kPid},
              {"tid", tid_of(t.stream)},
              {"ts", t.start * kMicros},
              {"args", std::move(args)}};
    if (step.op == StepOp::kFree) {
      e["ph"] = "i";
      e["s"] = "t";
    } else {
      e["ph"] = "X";
      e["dur"] = std::max(0.0, t.end - t.start) * kMicros;
    }
    events.push_back(std::move(e));
  }

  for (const MemoryPoint& p : memory_timeline(graph, plan, sim))
    events.push_back(counter("device memory", p.seconds, p.bytes));
  if (plan.budget_bytes > 0 && plan.budget_bytes < UINT64_MAX) {
    events.push_back(counter("budget", 0, plan.budget_bytes));
    events.push_back(counter("budget", sim.iteration_seconds, plan.budget_bytes));
  }

  json other = {{"model", plan.model_path},
                {"device", plan.device.name},
                {"peak_bytes", sim.peak_bytes},
                {"iteration_seconds", sim.iteration_seconds},
                {"compute_seconds", sim.compute_seconds}};
  if (plan.budget_bytes < UINT64_MAX) other["budget_bytes"] = plan.budget_bytes;
  return {{"traceEvents", std::move(events)},
          {"displayTimeUnit", "ms"},
          {"otherData", std::move(other)}};
}

void write_chrome_trace(const ir::Graph& graph, const Plan& plan, const SimResult& sim,
                        const std::string& path) {
  // ONNX names are bytes, not necessarily UTF-8; JSON must be, so bad
  // sequences become U+FFFD rather than failing the whole write.
  ir::write_file_atomically(
      path,
      chrome_trace(graph, plan, sim).dump(-1, ' ', false, json::error_handler_t::replace) + "\n");
}

}  // namespace memplan::planner
