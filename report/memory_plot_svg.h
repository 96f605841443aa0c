#pragma once
// An SVG plot of device memory over one iteration: the baseline against a
// plan, with the budget and the plan's swaps and recomputes marked.
#include <cstddef>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "planner/plan.h"
#include "planner/simulator.h"
#include "report/chrome_trace.h"

namespace memplan::report {

struct MemoryPlotOptions {
  std::string title;              // default: names the model and its dims
  std::size_t max_points = 4000;  // vertices per line, at most
  int width = 1100;
  int height = 560;
};

// The baseline of PLAN_FORMAT.md over its own time: nodes run back to back
// on one stream in graph order, node i taking node_seconds[i]; its outputs
// are allocated when it starts and its last readers' frees happen when it
// ends. Step function from (0, initial bytes), as memory_timeline().
std::vector<MemoryPoint> baseline_timeline(const ir::Graph& graph,
                                           const std::vector<double>& node_seconds);

// The vertices of a polyline drawing the step function `curve` (sorted by
// time) from its first point to `end_seconds`. When that takes more than
// `max_points` vertices, time is cut into max_points / 2 equal buckets and
// each is drawn flat at the highest memory within it, so no peak is lost.
std::vector<MemoryPoint> step_vertices(const std::vector<MemoryPoint>& curve, double end_seconds,
                                       std::size_t max_points);

// Text with &, <, >, " and ' escaped for XML; control characters and
// invalid UTF-8 become '?', which XML 1.0 could not carry.
std::string xml_escape(const std::string& text);

// The whole SVG document (UTF-8). The baseline uses plan.node_seconds; the
// plan's curve is memory_timeline(graph, plan, sim). A budget of
// UINT64_MAX (no limit) draws no budget line.
std::string memory_plot_svg(const ir::Graph& graph, const planner::Plan& plan,
                            const planner::SimResult& sim, const MemoryPlotOptions& options = {});

// Writes memory_plot_svg() to `path` atomically; throws InputError naming
// the path when it cannot.
void write_memory_plot_svg(const ir::Graph& graph, const planner::Plan& plan,
                           const planner::SimResult& sim, const std::string& path,
                           const MemoryPlotOptions& options = {});

}  // namespace memplan::report
