#include "report/chrome_trace.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "planner/residency.h"
#include "util/errors.h"
#include "util/json_text_writer.h"
#include "util/text_file.h"

namespace memplan::report {

// The plan's vocabulary, read here and never changed.
using planner::Plan;
using planner::Residency;
using planner::SimResult;
using planner::Step;
using planner::StepOp;
using planner::StepTiming;
using planner::Stream;
using planner::to_string;
namespace {

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
std::int64_t delta_of(const planner::SimResult& sim, std::size_t i, std::uint64_t initial) {
  std::uint64_t before = i == 0 ? initial : sim.steps[i - 1].bytes_in_use_after;
  return static_cast<std::int64_t>(sim.steps[i].bytes_in_use_after) -
         static_cast<std::int64_t>(before);
}

std::uint64_t tensor_bytes(const ir::Graph& graph, const planner::Plan& plan, ir::TensorId t) {
  if (t < plan.tensor_bytes.size()) return plan.tensor_bytes[t];
  return t < graph.tensors().size() ? graph.tensor(t).bytes : 0;
}

std::string step_name(const ir::Graph& graph, const Step& step) {
  if (step.on_node()) return step.id < graph.nodes().size() ? graph.node(step.id).name : "?";
  return step.id < graph.tensors().size() ? graph.tensor(step.id).name : "?";
}

// Keys in sorted order throughout: the file used to be a nlohmann::json
// document (sorted keys), and its bytes stay as they were.
void metadata(util::JsonTextWriter& w, const char* what, int tid, const char* key,
              std::string_view text, int number) {
  w.begin_object().key("args").begin_object().key(key);
  if (text.empty()) {
    w.value(number);
  } else {
    w.value(text);
  }
  w.end_object().member("name", what).member("ph", "M").member("pid", kPid);
  if (tid >= 0) w.member("tid", tid);
  w.end_object();
}

void counter(util::JsonTextWriter& w, const char* name, double seconds, std::uint64_t bytes) {
  w.begin_object().key("args").begin_object().member("bytes", bytes).end_object();
  w.member("name", name).member("ph", "C").member("pid", kPid).member("ts", seconds * kMicros);
  w.end_object();
}

void step_event(util::JsonTextWriter& w, const ir::Graph& graph, const planner::Plan& plan,
                const planner::SimResult& sim, std::size_t i, std::uint64_t initial) {
  const Step& step = plan.schedule[i];
  const StepTiming& t = sim.steps[i];
  w.begin_object().key("args").begin_object();
  if (step.on_node()) {
    // What the step allocated: all outputs for a compute, the missing ones
    // for a recompute.
    w.member("bytes", std::max<std::int64_t>(delta_of(sim, i, initial), 0));
    w.member("in_use_after", t.bytes_in_use_after);
    if (step.id < graph.nodes().size()) w.member("op_type", graph.node(step.id).op_type);
  } else {
    w.member("bytes", tensor_bytes(graph, plan, step.id));
    w.member("in_use_after", t.bytes_in_use_after);
  }
  w.member("step", i).end_object();
  w.member("cat", to_string(step.op));
  const bool instant = step.op == StepOp::kFree;
  if (!instant) w.member("dur", std::max(0.0, t.end - t.start) * kMicros);
  w.member("name", step_name(graph, step)).member("ph", instant ? "i" : "X").member("pid", kPid);
  if (instant) w.member("s", "t");
  w.member("tid", tid_of(t.stream)).member("ts", t.start * kMicros).end_object();
}

void other_data(util::JsonTextWriter& w, const planner::Plan& plan, const planner::SimResult& sim) {
  w.key("otherData").begin_object();
  if (plan.budget_bytes < UINT64_MAX) w.member("budget_bytes", plan.budget_bytes);
  w.member("compute_seconds", sim.compute_seconds).member("device", plan.device.name);
  w.member("iteration_seconds", sim.iteration_seconds).member("model", plan.model_path);
  w.member("peak_bytes", sim.peak_bytes).end_object();
}

}  // namespace

std::vector<MemoryPoint> memory_timeline(const ir::Graph& graph, const planner::Plan& plan,
                                         const planner::SimResult& sim) {
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

std::string chrome_trace_text(const ir::Graph& graph, const planner::Plan& plan,
                              const planner::SimResult& sim) {
  std::string text;
  util::JsonTextWriter w(text);
  w.begin_object().member("displayTimeUnit", "ms");
  other_data(w, plan, sim);
  w.key("traceEvents").begin_array();
  std::string process = "memplan plan";
  if (!plan.model_path.empty()) process += ": " + plan.model_path;
  metadata(w, "process_name", -1, "name", process, 0);
  for (Stream s : {Stream::kCompute, Stream::kD2H, Stream::kH2D}) {
    metadata(w, "thread_name", tid_of(s), "name", stream_label(s), 0);
    // Keeps the tracks in stream order rather than by first event.
    metadata(w, "thread_sort_index", tid_of(s), "sort_index", {}, tid_of(s));
  }
  const std::uint64_t initial = Residency(graph, plan).bytes_in_use();
  const std::size_t n = std::min(plan.schedule.size(), sim.steps.size());
  for (std::size_t i = 0; i < n; ++i) step_event(w, graph, plan, sim, i, initial);
  for (const MemoryPoint& p : memory_timeline(graph, plan, sim))
    counter(w, "device memory", p.seconds, p.bytes);
  if (plan.budget_bytes > 0 && plan.budget_bytes < UINT64_MAX) {
    counter(w, "budget", 0, plan.budget_bytes);
    counter(w, "budget", sim.iteration_seconds, plan.budget_bytes);
  }
  w.end_array().end_object();
  text += '\n';
  return text;
}

nlohmann::json chrome_trace(const ir::Graph& graph, const planner::Plan& plan,
                            const planner::SimResult& sim) {
  return nlohmann::json::parse(chrome_trace_text(graph, plan, sim));
}

void write_chrome_trace(const ir::Graph& graph, const planner::Plan& plan,
                        const planner::SimResult& sim, const std::string& path) {
  util::write_file_atomically(path, chrome_trace_text(graph, plan, sim));
}

}  // namespace memplan::report
