#pragma once
// Options shared by the commands that plan (plan, compare, maxbatch).
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "solvers/evictions.h"

namespace memplan::cli {

// "12GiB", "800MB", "4096" or "45%" (of the baseline peak).
std::uint64_t parse_budget(const std::string& text, std::uint64_t baseline_peak);
// "10%" or "0.1" -> 0.10.
double parse_fraction(const std::string& text, const std::string& what);
// CLI11's PositiveNumber says "Value 0 not in range 0.000000 to 1.79e308":
// this says "--time-limit: '0' is not a positive number of seconds".
CLI::Validator positive_seconds();
// --time-limit (per ILP solve) and --search-limit (all of a search's ILP
// solves together; default kSearchLimitPerTimeLimit x --time-limit).
struct IlpLimits {
  static constexpr double kSearchLimitPerTimeLimit = 5;
  double time_limit = 60;
  std::optional<double> search_limit;
  // "5 x --time-limit", for help and messages.
  static std::string default_search_limit();
  void add_to(CLI::App& cmd, std::string_view what_solves);
  // PlanRequest::deadline for a search that starts now.
  std::chrono::steady_clock::time_point deadline_from_now() const;
};
// "swap,recompute", "swap", "recompute".
solvers::Evictions parse_allow(const std::string& text);

// The files `memplan plan` writes (--outputs): a CI gate needs only
// plan.json and the exit code, and the others cost most of the time.
struct PlanOutputs {
  bool plan = true;    // plan.json
  bool report = true;  // report.md
  bool trace = true;   // trace.json
  bool svg = true;     // memory.svg
  bool model = true;   // model.memplan.onnx
  bool simulated() const { return report || trace || svg; }
};
// "plan,report,trace,svg,model" or any non-empty subset, in any order.
PlanOutputs parse_outputs(const std::string& text);

}  // namespace memplan::cli
