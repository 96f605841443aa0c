#include "report/memory_plot_svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <set>
#include <sstream>
#include <utility>

#include "ir/baseline_memory.h"
#include "ir/liveness.h"
#include "util/text_file.h"
#include "util/units.h"

namespace memplan::report {

// The plan's vocabulary, read here and never changed.
using planner::Decision;
using planner::Plan;
using planner::SimResult;
using planner::Step;
using planner::StepOp;
using planner::to_string;
namespace {

constexpr const char* kBaselineColor = "#7f7f7f";
constexpr const char* kPlanColor = "#1f77b4";
constexpr const char* kBudgetColor = "#d62728";
constexpr const char* kGridColor = "#e4e4e4";

struct Kind {
  StepOp op;
  const char* label;
  const char* color;
};
constexpr Kind kKinds[] = {{StepOp::kSwapOut, "swap out", "#ff7f0e"},
                           {StepOp::kSwapIn, "swap in", "#2ca02c"},
                           {StepOp::kRecompute, "recompute", "#9467bd"}};

std::string fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

// A unit of the axis: the label and how many base units (bytes, seconds)
// one of it holds.
struct Unit {
  const char* name;
  double scale;
};

Unit bytes_unit(double max_bytes) {
  static constexpr Unit kUnits[] = {{"B", 1.0},
                                    {"KiB", 1024.0},
                                    {"MiB", 1048576.0},
                                    {"GiB", 1073741824.0},
                                    {"TiB", 1099511627776.0}};
  Unit u = kUnits[0];
  for (const Unit& c : kUnits)
    if (max_bytes >= c.scale) u = c;
  return u;
}

Unit time_unit(double max_seconds) {
  if (max_seconds >= 10) return {"s", 1.0};
  if (max_seconds >= 1e-3) return {"ms", 1e-3};
  return {"\xC2\xB5s", 1e-6};  // µs
}

// A 1-2-5 step that cuts `range` into about `target` intervals.
double nice_step(double range, int target) {
  if (!(range > 0)) return 1;
  double raw = range / target;
  double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double norm = raw / mag;
  double f = norm < 1.5 ? 1 : norm < 3 ? 2 : norm < 7 ? 5 : 10;
  return f * mag;
}

int decimals_for(double step) {
  return step >= 1 ? 0 : static_cast<int>(std::ceil(-std::log10(step) - 1e-9));
}

std::string tick_label(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string default_title(const ir::Graph& graph, const planner::Plan& plan) {
  std::string name = graph.name;
  if (!plan.model_path.empty()) name = std::filesystem::path(plan.model_path).filename().string();
  if (name.empty()) name = "model";
  std::string dims;
  for (const auto& [k, v] : graph.dims)
    dims += (dims.empty() ? "" : ", ") + k + "=" + std::to_string(v);
  if (!dims.empty()) name += " (" + dims + ")";
  return "Device memory over one training iteration: " + name;
}

// Maps data to SVG pixels inside the plot area.
struct Frame {
  double left, right, top, bottom;
  double x_max, y_max;  // seconds, bytes at the right and top edges
  double x(double seconds) const { return left + (right - left) * seconds / x_max; }
  double y(double bytes) const { return bottom - (bottom - top) * bytes / y_max; }
};

std::string points_attr(const std::vector<MemoryPoint>& vertices, const Frame& f) {
  std::string s;
  s.reserve(vertices.size() * 14);
  for (const MemoryPoint& v : vertices) {
    if (!s.empty()) s += ' ';
    s += fmt("%.1f", f.x(v.seconds)) + "," + fmt("%.1f", f.y(static_cast<double>(v.bytes)));
  }
  return s;
}

double curve_max(const std::vector<MemoryPoint>& curve) {
  double m = 0;
  for (const MemoryPoint& p : curve) m = std::max(m, static_cast<double>(p.bytes));
  return m;
}

}  // namespace

std::vector<MemoryPoint> baseline_timeline(const ir::Graph& graph,
                                           const std::vector<double>& node_seconds) {
  ir::Liveness liveness(graph);
  ir::BaselineMemory base = ir::baseline_memory(graph, liveness);
  std::vector<MemoryPoint> points;
  points.reserve(2 * graph.nodes().size() + 1);
  points.push_back({0.0, base.initial_bytes});
  double now = 0;
  for (std::size_t i = 0; i < graph.nodes().size(); ++i) {
    points.push_back({now, base.after_compute[i]});
    now += i < node_seconds.size() ? node_seconds[i] : 0.0;
    points.push_back({now, base.after_frees[i]});
  }
  return points;
}

std::vector<MemoryPoint> step_vertices(const std::vector<MemoryPoint>& curve, double end_seconds,
                                       std::size_t max_points) {
  std::vector<MemoryPoint> v;
  if (curve.empty()) return v;
  const double start = curve.front().seconds;
  const double end = std::max(end_seconds, curve.back().seconds);
  if (2 * curve.size() <= max_points || max_points < 2) {
    v.reserve(2 * curve.size());
    v.push_back(curve.front());
    for (std::size_t i = 1; i < curve.size(); ++i) {
      v.push_back({curve[i].seconds, v.back().bytes});
      v.push_back(curve[i]);
    }
    v.push_back({end, curve.back().bytes});
    return v;
  }
  const std::size_t buckets = max_points / 2;
  const double width = (end - start) / static_cast<double>(buckets);
  v.reserve(2 * buckets);
  std::size_t j = 0;
  std::uint64_t current = curve.front().bytes;
  for (std::size_t b = 0; b < buckets; ++b) {
    const double lo = start + width * static_cast<double>(b);
    const double hi = b + 1 == buckets ? end : start + width * static_cast<double>(b + 1);
    // The bucket starts at the value carried in and rises to any point in it.
    std::uint64_t high = current;
    while (j < curve.size() && (curve[j].seconds < hi || b + 1 == buckets)) {
      current = curve[j].bytes;
      high = std::max(high, current);
      ++j;
    }
    v.push_back({lo, high});
    v.push_back({hi, high});
  }
  return v;
}

std::string xml_escape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      switch (c) {
        case '&':
          out += "&amp;";
          break;
        case '<':
          out += "&lt;";
          break;
        case '>':
          out += "&gt;";
          break;
        case '"':
          out += "&quot;";
          break;
        case '\'':
          out += "&apos;";
          break;
        default:
          out += (c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f
                     ? '?'
                     : static_cast<char>(c);
      }
      ++i;
      continue;
    }
    // A UTF-8 sequence: lead byte says its length; every byte after it must
    // be a continuation byte, or the whole lead is replaced.
    std::size_t len = (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 0;
    bool ok = len != 0 && i + len <= text.size();
    for (std::size_t k = 1; ok && k < len; ++k)
      ok = (static_cast<unsigned char>(text[i + k]) & 0xc0) == 0x80;
    if (ok) {
      out.append(text, i, len);
      i += len;
    } else {
      out += '?';
      ++i;
    }
  }
  return out;
}

// Title and a line of the numbers that matter.
void put_title(std::ostringstream& s, const ir::Graph& graph, const planner::Plan& plan,
               const planner::SimResult& sim, const MemoryPlotOptions& options, const Frame& f,
               std::uint64_t base_peak, double base_end) {
  const std::string title = options.title.empty() ? default_title(graph, plan) : options.title;
  std::size_t swaps = 0, recomputes = 0;
  for (Decision d : plan.decisions) {
    swaps += d == Decision::kSwap;
    recomputes += d == Decision::kRecompute;
  }
  const double base_seconds = base_end;
  std::string subtitle = "baseline: peak " + util::human_bytes(base_peak) + ", " +
                         util::human_seconds(base_seconds) + ". plan: peak " +
                         util::human_bytes(sim.peak_bytes);
  if (base_peak > 0)
    subtitle +=
        fmt(" (%+.1f%%)",
            100.0 * (static_cast<double>(sim.peak_bytes) / static_cast<double>(base_peak) - 1));
  subtitle += ", " + util::human_seconds(sim.iteration_seconds);
  if (base_seconds > 0)
    subtitle += fmt(" (%+.1f%%)", 100.0 * (sim.iteration_seconds / base_seconds - 1));
  subtitle +=
      "; " + std::to_string(swaps) + " swapped, " + std::to_string(recomputes) + " recomputed";
  if (!plan.device.name.empty()) subtitle += "; " + plan.device.name;
  s << "<text x=\"" << f.left << "\" y=\"26\" font-size=\"17\" font-weight=\"bold\">"
    << xml_escape(title) << "</text>\n"
    << "<text x=\"" << f.left << "\" y=\"46\" fill=\"#444\">" << xml_escape(subtitle)
    << "</text>\n";
}

struct Axes {
  Unit bu, tu;
  double y_top, y_step, x_right, x_step;
};

// Grid, axes and tick labels.
void put_axes(std::ostringstream& s, const Frame& f, const Axes& a) {
  const Unit &bu = a.bu, &tu = a.tu;
  const double y_top = a.y_top, y_step = a.y_step, x_right = a.x_right, x_step = a.x_step;
  s << "<g stroke=\"" << kGridColor << "\" stroke-width=\"1\">\n";
  for (double v = 0; v <= y_top + y_step * 1e-6; v += y_step)
    s << "<line x1=\"" << f.left << "\" x2=\"" << f.right << "\" y1=\""
      << fmt("%.1f", f.y(v * bu.scale)) << "\" y2=\"" << fmt("%.1f", f.y(v * bu.scale)) << "\"/>\n";
  for (double v = 0; v <= x_right + x_step * 1e-6; v += x_step)
    s << "<line y1=\"" << f.top << "\" y2=\"" << f.bottom << "\" x1=\""
      << fmt("%.1f", f.x(v * tu.scale)) << "\" x2=\"" << fmt("%.1f", f.x(v * tu.scale)) << "\"/>\n";
  s << "</g>\n<g fill=\"#333\" font-size=\"11\">\n";
  for (double v = 0; v <= y_top + y_step * 1e-6; v += y_step)
    s << "<text x=\"" << f.left - 8 << "\" y=\"" << fmt("%.1f", f.y(v * bu.scale) + 4)
      << "\" text-anchor=\"end\">" << tick_label(v, decimals_for(y_step)) << "</text>\n";
  for (double v = 0; v <= x_right + x_step * 1e-6; v += x_step)
    s << "<text x=\"" << fmt("%.1f", f.x(v * tu.scale)) << "\" y=\"" << f.bottom + 18
      << "\" text-anchor=\"middle\">" << tick_label(v, decimals_for(x_step)) << "</text>\n";
  s << "</g>\n"
    << "<rect x=\"" << f.left << "\" y=\"" << f.top << "\" width=\"" << f.right - f.left
    << "\" height=\"" << f.bottom - f.top << "\" fill=\"none\" stroke=\"#333\"/>\n"
    << "<text x=\"" << (f.left + f.right) / 2 << "\" y=\"" << f.bottom + 38
    << "\" text-anchor=\"middle\">time (" << tu.name << ")</text>\n"
    << "<text transform=\"translate(20," << (f.top + f.bottom) / 2
    << ") rotate(-90)\" text-anchor=\"middle\">device memory in use (" << bu.name << ")</text>\n";
}

// The curves: the plan shaded so the gap to the baseline reads at a glance;
// the budget as a dashed line where it is drawn.
void put_curves(std::ostringstream& s, const Frame& f, const planner::Plan& plan,
                const std::vector<MemoryPoint>& planned, double plan_end,
                const std::vector<MemoryPoint>& base, double base_end,
                const MemoryPlotOptions& options, bool budget_drawn) {
  std::vector<MemoryPoint> pv = step_vertices(planned, plan_end, options.max_points);
  std::vector<MemoryPoint> bv = step_vertices(base, base_end, options.max_points);
  if (!pv.empty()) {
    std::vector<MemoryPoint> area = pv;
    area.push_back({pv.back().seconds, 0});
    area.push_back({pv.front().seconds, 0});
    s << "<polygon fill=\"" << kPlanColor << "\" fill-opacity=\"0.12\" stroke=\"none\" points=\""
      << points_attr(area, f) << "\"/>\n";
  }
  s << "<polyline id=\"baseline\" fill=\"none\" stroke=\"" << kBaselineColor
    << "\" stroke-width=\"1.4\" stroke-linejoin=\"round\" points=\"" << points_attr(bv, f)
    << "\"/>\n"
    << "<polyline id=\"plan\" fill=\"none\" stroke=\"" << kPlanColor
    << "\" stroke-width=\"1.6\" stroke-linejoin=\"round\" points=\"" << points_attr(pv, f)
    << "\"/>\n";
  if (budget_drawn) {
    const std::string y = fmt("%.1f", f.y(static_cast<double>(plan.budget_bytes)));
    s << "<line id=\"budget\" x1=\"" << f.left << "\" x2=\"" << f.right << "\" y1=\"" << y
      << "\" y2=\"" << y << "\" stroke=\"" << kBudgetColor
      << "\" stroke-width=\"1.4\" stroke-dasharray=\"6 4\"/>\n"
      << "<text x=\"" << f.right - 4 << "\" y=\""
      << fmt("%.1f", f.y(static_cast<double>(plan.budget_bytes)) - 5)
      << "\" text-anchor=\"end\" fill=\"" << kBudgetColor << "\">budget "
      << xml_escape(util::human_bytes(plan.budget_bytes)) << "</text>\n";
  }
}

// Swaps and recomputes: one row of ticks each above the plot, at the time
// each step starts; ticks sharing a pixel column are drawn once, their
// tooltip naming the first and counting the rest.
void put_step_ticks(std::ostringstream& s, const Frame& f, const ir::Graph& graph,
                    const planner::Plan& plan, const planner::SimResult& sim) {
  const std::size_t n = std::min(plan.schedule.size(), sim.steps.size());
  for (std::size_t k = 0; k < std::size(kKinds); ++k) {
    const double row = 62.0 + 11.0 * static_cast<double>(k);
    s << "<text x=\"" << f.left - 8 << "\" y=\"" << row + 8
      << "\" text-anchor=\"end\" font-size=\"10\" fill=\"" << kKinds[k].color << "\">"
      << kKinds[k].label << "</text>\n<g stroke=\"" << kKinds[k].color
      << "\" stroke-width=\"1\">\n";
    std::vector<std::pair<long, std::pair<std::string, std::size_t>>>
        columns;  // px -> first name, count
    for (std::size_t i = 0; i < n; ++i) {
      const Step& step = plan.schedule[i];
      if (step.op != kKinds[k].op) continue;
      const long px = std::lround(f.x(sim.steps[i].start) * 2);  // half-pixel columns
      if (!columns.empty() && columns.back().first == px) {
        ++columns.back().second.second;
        continue;
      }
      std::string name =
          step.on_node() ? (step.id < graph.nodes().size() ? graph.node(step.id).name : "?")
                         : (step.id < graph.tensors().size() ? graph.tensor(step.id).name : "?");
      columns.push_back({px, {std::move(name), 1}});
    }
    for (const auto& [px, what] : columns) {
      const std::string x = fmt("%.1f", static_cast<double>(px) / 2);
      s << "<line x1=\"" << x << "\" x2=\"" << x << "\" y1=\"" << row << "\" y2=\"" << row + 9
        << "\"><title>" << kKinds[k].label << " " << xml_escape(what.first);
      if (what.second > 1) s << " and " << what.second - 1 << " more";
      s << "</title></line>\n";
    }
    s << "</g>\n";
  }
}

// Legend, one row under the axis title.
void put_legend(std::ostringstream& s, const Frame& f, double ly, const planner::Plan& plan,
                const planner::SimResult& sim, std::uint64_t base_peak, bool has_budget,
                bool budget_drawn) {
  struct Entry {
    std::string label;
    const char* color;
    const char* dash;
  };
  std::vector<Entry> entries = {
      {"baseline (peak " + util::human_bytes(base_peak) + ")", kBaselineColor, ""},
      {"plan (peak " + util::human_bytes(sim.peak_bytes) + ")", kPlanColor, ""}};
  if (has_budget)
    entries.push_back({"budget " + util::human_bytes(plan.budget_bytes) +
                           (budget_drawn ? "" : " (above the plot)"),
                       kBudgetColor, "6 4"});
  double lx = f.left;
  for (const Entry& e : entries) {
    s << "<line x1=\"" << lx << "\" x2=\"" << lx + 24 << "\" y1=\"" << ly - 4 << "\" y2=\""
      << ly - 4 << "\" stroke=\"" << e.color << "\" stroke-width=\"2\"";
    if (*e.dash) s << " stroke-dasharray=\"" << e.dash << "\"";
    s << "/>\n<text x=\"" << lx + 30 << "\" y=\"" << ly << "\">" << xml_escape(e.label)
      << "</text>\n";
    lx += 30 + 7.0 * static_cast<double>(e.label.size()) + 24;
  }
}

std::string memory_plot_svg(const ir::Graph& graph, const planner::Plan& plan,
                            const planner::SimResult& sim, const MemoryPlotOptions& options) {
  const std::vector<MemoryPoint> base = baseline_timeline(graph, plan.node_seconds);
  const std::vector<MemoryPoint> planned = memory_timeline(graph, plan, sim);
  const double base_end = base.empty() ? 0 : base.back().seconds;
  const double plan_end = std::max(sim.iteration_seconds, planned.back().seconds);
  const std::uint64_t base_peak = static_cast<std::uint64_t>(curve_max(base));

  const bool has_budget = plan.budget_bytes > 0 && plan.budget_bytes < UINT64_MAX;
  double data_max =
      std::max({curve_max(base), curve_max(planned), static_cast<double>(sim.peak_bytes), 1.0});
  // A budget far above the data would squash both curves to the floor; it is
  // then only named in the legend.
  const bool budget_drawn = has_budget && static_cast<double>(plan.budget_bytes) <= 1.5 * data_max;
  if (budget_drawn) data_max = std::max(data_max, static_cast<double>(plan.budget_bytes));

  const Unit bu = bytes_unit(data_max);
  const double y_step = nice_step(data_max / bu.scale * 1.05, 6);
  const double y_top = std::ceil(data_max / bu.scale * 1.05 / y_step) * y_step;
  double x_data = std::max(base_end, plan_end);
  if (!(x_data > 0)) x_data = 1e-3;
  const Unit tu = time_unit(x_data);
  const double x_step = nice_step(x_data / tu.scale, 8);
  const double x_right = std::ceil(x_data / tu.scale / x_step - 1e-9) * x_step;

  const int w = options.width, h = options.height;
  const Frame f{80.0, w - 30.0, 100.0, h - 80.0, x_right * tu.scale, y_top * bu.scale};

  std::ostringstream s;
  s << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << w << "\" height=\"" << h
    << "\" viewBox=\"0 0 " << w << " " << h
    << "\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\" font-size=\"12\">\n"
    << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";

  put_title(s, graph, plan, sim, options, f, base_peak, base_end);
  put_axes(s, f, Axes{bu, tu, y_top, y_step, x_right, x_step});
  put_curves(s, f, plan, planned, plan_end, base, base_end, options, budget_drawn);
  put_step_ticks(s, f, graph, plan, sim);
  put_legend(s, f, h - 14.0, plan, sim, base_peak, has_budget, budget_drawn);
  s << "</svg>\n";
  return s.str();
}

void write_memory_plot_svg(const ir::Graph& graph, const planner::Plan& plan,
                           const planner::SimResult& sim, const std::string& path,
                           const MemoryPlotOptions& options) {
  util::write_file_atomically(path, memory_plot_svg(graph, plan, sim, options));
}

}  // namespace memplan::report
