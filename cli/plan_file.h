#pragma once
// plan.json and the optimizer model a plan covers. planner/ writes the
// format's keys; a plan for a training graph with its optimizer steps also
// names the optimizer model, under model.optimizer {path, sha256} (PLAN_FORMAT
// allows added keys), so a reader can tell what the plan is for.
#include <nlohmann/json.hpp>
#include <string>

#include "ir/onnx_loader.h"
#include "planner/plan.h"

namespace memplan::cli {

// planner::write_plan_file, with model.optimizer when `model` has one.
// Returns the sha256 of the bytes written.
std::string write_plan(const ir::LoadedModel& model, const planner::Plan& plan,
                       const std::string& path);

// Why plan `doc` and `model` disagree about the optimizer (one made with it,
// the other without, or another optimizer file); empty when they agree.
std::string optimizer_mismatch(const nlohmann::json& doc, const ir::LoadedModel& model);

}  // namespace memplan::cli
