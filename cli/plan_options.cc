#include "cli/plan_options.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <sstream>
#include <utility>

#include "util/errors.h"
#include "util/units.h"

namespace memplan::cli {

namespace {

// std::stod without its exceptions: the value and how many characters it
// read (0: none).
std::pair<double, std::size_t> read_double(const std::string& text) {
  std::size_t pos = 0;
  double v = 0;
  try {
    v = std::stod(text, &pos);
  } catch (const std::exception&) {
    pos = 0;
  }
  return {v, pos};
}

}  // namespace

double parse_fraction(const std::string& text, const std::string& what) {
  const auto [v, pos] = read_double(text);
  bool pct = pos < text.size() && text.substr(pos) == "%";
  if (pos == 0 || (pos != text.size() && !pct) || !std::isfinite(v) || v < 0)
    throw UsageError(what + ": '" + text + "' is not a percentage (e.g. 10%)");
  return pct ? v / 100.0 : v;
}

std::uint64_t parse_budget(const std::string& text, std::uint64_t baseline_peak) {
  if (!text.empty() && text.back() == '%') {
    double f = parse_fraction(text, "--budget");
    return static_cast<std::uint64_t>(std::floor(f * static_cast<double>(baseline_peak)));
  }
  return util::parse_bytes(text, "--budget");
}

solvers::Evictions parse_allow(const std::string& text) {
  solvers::Evictions allowed{false, false};
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item == "swap") {
      allowed.swap = true;
    } else if (item == "recompute") {
      allowed.recompute = true;
    } else {
      throw UsageError("--allow: '" + item + "' is not swap or recompute");
    }
  }
  if (!allowed.swap && !allowed.recompute)
    throw UsageError("--allow: name swap, recompute or both");
  return allowed;
}

PlanOutputs parse_outputs(const std::string& text) {
  PlanOutputs o{false, false, false, false, false};
  const std::pair<const char*, bool PlanOutputs::*> names[] = {{"plan", &PlanOutputs::plan},
                                                               {"report", &PlanOutputs::report},
                                                               {"trace", &PlanOutputs::trace},
                                                               {"svg", &PlanOutputs::svg},
                                                               {"model", &PlanOutputs::model}};
  std::stringstream ss(text);
  std::string item;
  bool any = false;
  while (std::getline(ss, item, ',')) {
    auto it = std::find_if(std::begin(names), std::end(names),
                           [&](const auto& n) { return item == n.first; });
    if (it == std::end(names))
      throw UsageError("--outputs: '" + item + "' is not plan, report, trace, svg or model");
    o.*(it->second) = any = true;
  }
  if (!any) throw UsageError("--outputs: name at least one of plan, report, trace, svg, model");
  return o;
}

CLI::Validator positive_seconds() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        const auto [v, pos] = read_double(text);
        if (pos == 0 || pos != text.size() || !(v > 0) || !std::isfinite(v))
          return "'" + text + "' is not a positive number of seconds";
        return {};
      },
      "SECONDS>0");
}

std::string IlpLimits::default_search_limit() {
  return std::to_string(static_cast<int>(kSearchLimitPerTimeLimit)) + " x --time-limit";
}

void IlpLimits::add_to(CLI::App& cmd, std::string_view what_solves) {
  cmd.add_option("--time-limit", time_limit,
                 "ILP time limit per solve, seconds; " + std::string(what_solves) +
                     " may solve several times (budget tightening, second opinions): "
                     "--search-limit bounds them together")
      ->capture_default_str()
      ->check(positive_seconds());
  cmd.add_option(
         "--search-limit", search_limit,
         "Seconds for all of a search's ILP solves together (default: " + default_search_limit() +
             "); no ILP solve starts after it and the last gets what is left. The "
             "heuristic's work is not cut short: its plan stands when the ILP's time "
             "runs out")
      ->check(positive_seconds());
}

std::chrono::steady_clock::time_point IlpLimits::deadline_from_now() const {
  const double seconds = search_limit.value_or(kSearchLimitPerTimeLimit * time_limit);
  return std::chrono::steady_clock::now() +
         std::chrono::duration_cast<std::chrono::steady_clock::duration>(
             std::chrono::duration<double>(seconds));
}

}  // namespace memplan::cli
