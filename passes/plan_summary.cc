#include "passes/plan_summary.h"

#include <nlohmann/json.hpp>
#include <vector>

#include "planner/plan_json.h"
#include "util/errors.h"
#include "util/sha256.h"

namespace memplan::passes {
namespace {

// The shortest text that reads back as the same double, as plan.json has it.
std::string seconds_text(double s) { return nlohmann::json(s).dump(); }

std::vector<std::pair<std::string, std::string>> entries(const PlanSummary& s) {
  return {
      {"plan_sha256", s.plan_sha256},
      {"model_sha256", s.model_sha256},
      {"device", s.device},
      {"dims", s.dims},
      {"budget_bytes", std::to_string(s.budget_bytes)},
      {"solver", s.solver},
      {"solver_status", s.solver_status},
      {"predicted_peak_bytes", std::to_string(s.predicted_peak_bytes)},
      {"predicted_iteration_seconds", seconds_text(s.predicted_iteration_seconds)},
      {"baseline_peak_bytes", std::to_string(s.baseline_peak_bytes)},
      {"baseline_iteration_seconds", seconds_text(s.baseline_iteration_seconds)},
      {"swap_outs", std::to_string(s.swap_outs)},
      {"swap_ins", std::to_string(s.swap_ins)},
      {"recomputes", std::to_string(s.recomputes)},
      {"anchors", std::to_string(s.anchors)},
  };
}

bool has_prefix(const std::string& key) {
  return key.compare(0, kMetadataPrefix.size(), kMetadataPrefix) == 0;
}

}  // namespace

PlanSummary summarize_plan(const planner::Plan& plan, const std::string& plan_sha256) {
  PlanSummary s;
  s.plan_sha256 = plan_sha256;
  s.model_sha256 = plan.model_sha256;
  s.device = plan.device.name;
  for (const auto& [name, value] : plan.dims)
    s.dims += (s.dims.empty() ? "" : ",") + name + "=" + std::to_string(value);
  s.budget_bytes = plan.budget_bytes;
  s.solver = plan.solver.name;
  s.solver_status = plan.solver.status;
  s.predicted_peak_bytes = plan.predicted.peak_bytes;
  s.predicted_iteration_seconds = plan.predicted.iteration_seconds;
  s.baseline_peak_bytes = plan.predicted.baseline_peak_bytes;
  s.baseline_iteration_seconds = plan.predicted.baseline_iteration_seconds;
  return s;
}

std::string plan_file_sha256(const ir::Graph& graph, const planner::Plan& plan) {
  return util::sha256_hex(planner::plan_file_text(graph, plan));
}

void write_summary(onnx::ModelProto& model, const PlanSummary& summary) {
  auto* props = model.mutable_metadata_props();
  google::protobuf::RepeatedPtrField<onnx::StringStringEntryProto> kept;
  for (auto& p : *props)
    if (!has_prefix(p.key())) *kept.Add() = std::move(p);
  for (auto& [key, value] : entries(summary)) {
    auto* e = kept.Add();
    e->set_key(std::string(kMetadataPrefix) + key);
    e->set_value(value);
  }
  props->Swap(&kept);
}

std::optional<PlanSummary> read_summary(const onnx::ModelProto& model, const std::string& where) {
  std::map<std::string, std::string> found;
  for (const auto& p : model.metadata_props())
    if (has_prefix(p.key())) found[p.key().substr(kMetadataPrefix.size())] = p.value();
  if (found.empty()) return std::nullopt;

  auto text = [&](const std::string& key) -> std::string {
    auto it = found.find(key);
    if (it == found.end())
      throw InputError(where + ": metadata_props lacks " + std::string(kMetadataPrefix) + key);
    return it->second;
  };
  auto number = [&](const std::string& key) -> std::uint64_t {
    std::string t = text(key);
    std::size_t pos = 0;
    unsigned long long v = 0;
    try {
      v = std::stoull(t, &pos);
    } catch (const std::exception&) {
      pos = 0;
    }
    if (t.empty() || pos != t.size() || t[0] == '-')
      throw InputError(where + ": metadata_props " + std::string(kMetadataPrefix) + key + " = '" +
                       t + "' is not a non-negative integer");
    return v;
  };
  auto seconds = [&](const std::string& key) -> double {
    std::string t = text(key);
    std::size_t pos = 0;
    double v = 0;
    try {
      v = std::stod(t, &pos);
    } catch (const std::exception&) {
      pos = 0;
    }
    if (t.empty() || pos != t.size())
      throw InputError(where + ": metadata_props " + std::string(kMetadataPrefix) + key + " = '" +
                       t + "' is not a number");
    return v;
  };

  PlanSummary s;
  s.plan_sha256 = text("plan_sha256");
  s.model_sha256 = text("model_sha256");
  s.device = text("device");
  s.dims = text("dims");
  s.budget_bytes = number("budget_bytes");
  s.solver = text("solver");
  s.solver_status = text("solver_status");
  s.predicted_peak_bytes = number("predicted_peak_bytes");
  s.predicted_iteration_seconds = seconds("predicted_iteration_seconds");
  s.baseline_peak_bytes = number("baseline_peak_bytes");
  s.baseline_iteration_seconds = seconds("baseline_iteration_seconds");
  s.swap_outs = number("swap_outs");
  s.swap_ins = number("swap_ins");
  s.recomputes = number("recomputes");
  s.anchors = found.count("anchors") != 0 ? number("anchors") : 0;
  return s;
}

}  // namespace memplan::passes
