#pragma once
// A simulated plan as a Chrome Trace Event Format file (opens in Perfetto or
// chrome://tracing): one track per stream, one slice per step, a counter
// track for device memory.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "planner/plan.h"
#include "planner/simulator.h"

namespace memplan::report {

// Device memory in use from `seconds` on, until the next point.
struct MemoryPoint {
  double seconds = 0;
  std::uint64_t bytes = 0;
};

// Device memory over simulated time, as a step function starting at
// (0, initial bytes). SimResult's bytes follow issue order, but streams run
// concurrently, so each step's change is placed in time instead: an
// allocation (compute, recompute, swap_in) at the step's start, a release
// (free) at its end; ties keep issue order. One point per step that changes
// memory, sorted by time; the last point equals the last step's bytes.
std::vector<MemoryPoint> memory_timeline(const ir::Graph& graph, const planner::Plan& plan,
                                         const planner::SimResult& sim);

// {"traceEvents": [...], "displayTimeUnit": "ms", "otherData": {...}}; ts and
// dur in microseconds. Tracks (pid 1): tid 1 compute, 2 device->host,
// 3 host->device, each named by a thread_name metadata event. compute,
// recompute and swap steps are complete events ("X", cat = the step's op,
// name = node name or tensor name, args.bytes = bytes the step allocates or
// moves); free steps are thread-scoped instant events ("i"). Counter "device
// memory" follows memory_timeline(); counter "budget" is drawn when finite.
// Written as text, keys sorted; names that are not UTF-8 get U+FFFD for
// their bad sequences. chrome_trace() is that text parsed.
std::string chrome_trace_text(const ir::Graph& graph, const planner::Plan& plan,
                              const planner::SimResult& sim);
nlohmann::json chrome_trace(const ir::Graph& graph, const planner::Plan& plan,
                            const planner::SimResult& sim);

// Writes chrome_trace() to `path` atomically; throws InputError naming the
// path when it cannot.
void write_chrome_trace(const ir::Graph& graph, const planner::Plan& plan,
                        const planner::SimResult& sim, const std::string& path);

}  // namespace memplan::report
