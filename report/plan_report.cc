#include "report/plan_report.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <sstream>

#include "util/units.h"

namespace memplan::report {

// The plan's vocabulary, read here and never changed.
using planner::Decision;
using planner::Plan;
using planner::SimResult;
using planner::to_string;
namespace {

std::string percent(double part, double whole) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f%%", whole > 0 ? 100.0 * part / whole : 0.0);
  return buf;
}

std::string md_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '|' || c == '`') out.push_back('\\');
    out.push_back(c);
  }
  return out;
}

}  // namespace

std::string plan_report_markdown(const ir::Graph& g, const planner::Plan& plan,
                                 const planner::SimResult& sim, const ReportContext& ctx) {
  std::ostringstream md;
  const auto& pr = plan.predicted;
  const double overhead = pr.iteration_seconds - pr.baseline_iteration_seconds;
  md << "# memplan plan\n\n";
  md << "| | |\n|---|---|\n";
  md << "| model | `" << md_escape(plan.model_path) << "` |\n";
  md << "| dims |";
  for (const auto& [k, v] : plan.dims) md << " " << k << "=" << v;
  md << " |\n";
  md << "| device | " << plan.device.name << " (H2D " << plan.device.h2d_bytes_per_s / 1e9
     << " GB/s, D2H " << plan.device.d2h_bytes_per_s / 1e9 << " GB/s) |\n";
  md << "| budget | " << util::human_bytes(plan.budget_bytes) << " (" << plan.budget_bytes
     << " B) |\n";
  md << "| peak | " << util::human_bytes(pr.peak_bytes) << " (" << pr.peak_bytes << " B), baseline "
     << util::human_bytes(pr.baseline_peak_bytes) << " — "
     << percent(static_cast<double>(pr.peak_bytes), static_cast<double>(pr.baseline_peak_bytes))
     << " of it |\n";
  md << "| iteration | " << util::human_seconds(pr.iteration_seconds) << ", baseline "
     << util::human_seconds(pr.baseline_iteration_seconds) << " — overhead "
     << percent(overhead, pr.baseline_iteration_seconds) << " |\n";
  md << "| compute | " << util::human_seconds(pr.compute_seconds) << " (recompute adds "
     << util::human_seconds(pr.compute_seconds - pr.baseline_iteration_seconds) << ") |\n";
  md << "| stalls | compute " << util::human_seconds(sim.stall_seconds[0]) << ", d2h "
     << util::human_seconds(sim.stall_seconds[1]) << ", h2d "
     << util::human_seconds(sim.stall_seconds[2]) << " |\n";
  md << "| solver | " << plan.solver.name << ", " << plan.solver.status << ", model objective "
     << util::human_seconds(plan.solver.objective_seconds);
  if (plan.solver.bound_seconds) {
    md << ", bound " << util::human_seconds(*plan.solver.bound_seconds) << ", gap "
       << percent(plan.solver.objective_seconds - *plan.solver.bound_seconds,
                  plan.solver.objective_seconds);
  }
  md << ", " << util::human_seconds(plan.solver.solve_seconds);
  if (ctx.rounds > 1) md << ", " << ctx.rounds << " rounds";
  md << " |\n";
  if (!ctx.note.empty()) md << "| note | " << md_escape(ctx.note) << " |\n";

  // Where the tensors went.
  std::array<std::size_t, 3> count{};
  std::array<std::uint64_t, 3> bytes{};
  std::vector<ir::TensorId> moved;
  for (ir::TensorId t = 0; t < plan.decisions.size(); ++t) {
    auto d = static_cast<std::size_t>(plan.decisions[t]);
    ++count[d];
    bytes[d] += g.tensor(t).bytes;
    if (plan.decisions[t] != Decision::kKeep) moved.push_back(t);
  }
  md << "\n## Decisions\n\n| decision | tensors | bytes |\n|---|---:|---:|\n";
  for (Decision d : {Decision::kKeep, Decision::kSwap, Decision::kRecompute}) {
    auto i = static_cast<std::size_t>(d);
    md << "| " << to_string(d) << " | " << count[i] << " | " << util::human_bytes(bytes[i])
       << " |\n";
  }
  std::size_t steps[5] = {};
  for (const auto& s : plan.schedule) ++steps[static_cast<int>(s.op)];
  md << "\nSchedule: " << plan.schedule.size() << " steps (" << steps[0] << " compute, " << steps[1]
     << " recompute, " << steps[2] << " swap_out, " << steps[3] << " swap_in, " << steps[4]
     << " free).\n";

  std::stable_sort(moved.begin(), moved.end(),
                   [&](auto a, auto b) { return g.tensor(a).bytes > g.tensor(b).bytes; });
  md << "\n## Largest decisions\n\n| tensor | bytes | class | decision | made by "
        "|\n|---|---:|---|---|---|\n";
  for (std::size_t i = 0; i < moved.size() && i < 20; ++i) {
    const auto& t = g.tensor(moved[i]);
    md << "| `" << md_escape(t.name) << "` | " << util::human_bytes(t.bytes) << " | "
       << ir::to_string(t.cls) << " | " << to_string(plan.decisions[moved[i]]) << " | `"
       << md_escape(t.producer == ir::kNoNode ? std::string("-") : g.node(t.producer).name)
       << "` |\n";
  }
  if (moved.size() > 20)
    md << "\n… and " << moved.size() - 20 << " more (plan.json lists every tensor).\n";
  return md.str();
}

}  // namespace memplan::report
