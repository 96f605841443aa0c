#include "cli/plan_file.h"

#include "planner/plan_json.h"
#include "util/errors.h"
#include "util/sha256.h"
#include "util/text_file.h"

namespace memplan::cli {
namespace {

// The optimizer key goes in as text: the writer streams the plan without a
// document (planner/plan_json_text.cc), so the key is spliced in before
// model.dims, in the writer's layout (indent 2, as nlohmann dumps).
std::string with_optimizer_key(std::string text, const ir::OptimizerModel& opt) {
  const std::string model_key = "\n  \"model\": {\n";
  const std::string dims_key = "\n    \"dims\": ";
  const auto model_at = text.find(model_key);
  const auto dims_at =
      model_at == std::string::npos ? std::string::npos : text.find(dims_key, model_at);
  if (dims_at == std::string::npos)
    throw InvalidPlanError("plan.json: no model.dims to put model.optimizer before");
  const std::string key =
      "\n    \"optimizer\": {\n      \"path\": " + nlohmann::json(opt.path).dump() +
      ",\n      \"sha256\": " + nlohmann::json(opt.sha256).dump() + "\n    },";
  text.insert(dims_at, key);
  return text;
}

}  // namespace

std::string write_plan(const ir::LoadedModel& model, const planner::Plan& plan,
                       const std::string& path) {
  if (!model.optimizer) return planner::write_plan_file(model.graph, plan, path);
  const std::string text =
      with_optimizer_key(planner::plan_file_text(model.graph, plan), *model.optimizer);
  util::write_file_atomically(path, text);
  return util::sha256_hex(text);
}

std::string optimizer_mismatch(const nlohmann::json& doc, const ir::LoadedModel& model) {
  const nlohmann::json* opt = nullptr;
  if (doc.is_object() && doc.contains("model") && doc["model"].is_object() &&
      doc["model"].contains("optimizer"))
    opt = &doc["model"]["optimizer"];
  if (opt == nullptr && !model.optimizer) return "";
  if (opt == nullptr)
    return "the plan was made for the training graph alone, not with the optimizer model " +
           model.optimizer->path + ": give " + model.path + " without it";
  const std::string path = opt->is_object() && opt->contains("path") && (*opt)["path"].is_string()
                               ? (*opt)["path"].get<std::string>()
                               : std::string("?");
  if (!model.optimizer)
    return "the plan was made with the optimizer model " + path +
           " (model.optimizer): give the artifacts folder or --optimizer";
  const bool same = opt->is_object() && opt->contains("sha256") &&
                    (*opt)["sha256"] == nlohmann::json(model.optimizer->sha256);
  if (!same)
    return "model.optimizer.sha256 is not the sha256 of " + model.optimizer->path + " (" +
           model.optimizer->sha256 + "): the plan was made for another optimizer model";
  return "";
}

}  // namespace memplan::cli
