#pragma once
// The plan's summary as the rewritten model carries it: metadata_props whose
// keys start with `memplan.`, written by the rewrite and read by `explain`.
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "ir/graph.h"
#include "onnx/onnx_pb.h"
#include "planner/plan.h"

namespace memplan::passes {

inline constexpr std::string_view kMetadataPrefix = "memplan.";

struct PlanSummary {
  std::string plan_sha256;
  std::string model_sha256;  // of the model the plan was made for
  std::string device;
  std::string dims;  // "batch=2,seq=64"
  std::uint64_t budget_bytes = 0;
  std::string solver;
  std::string solver_status;
  std::uint64_t predicted_peak_bytes = 0;
  double predicted_iteration_seconds = 0;
  std::uint64_t baseline_peak_bytes = 0;
  double baseline_iteration_seconds = 0;
  // Steps of the plan that became nodes.
  std::size_t swap_outs = 0;
  std::size_t swap_ins = 0;
  std::size_t recomputes = 0;
  // Nodes ordered by anchors (passes/order_anchor.h), not counting the
  // guards against ORT's SkipLayerNorm fusion; models rewritten before
  // anchors existed have none and no key for it.
  std::size_t anchors = 0;
};

// The summary of `plan`; the step counts are left for the caller.
PlanSummary summarize_plan(const planner::Plan& plan, const std::string& plan_sha256);

// sha256 of the plan as write_plan_file() writes it.
std::string plan_file_sha256(const ir::Graph& graph, const planner::Plan& plan);

// Replaces every `memplan.` key of the model's metadata_props by the
// summary's; other keys are kept, in their order.
void write_summary(onnx::ModelProto& model, const PlanSummary& summary);

// nullopt when the model has no memplan summary (it was not rewritten);
// InputError naming `where` when a key is there but malformed.
std::optional<PlanSummary> read_summary(const onnx::ModelProto& model, const std::string& where);

}  // namespace memplan::passes
