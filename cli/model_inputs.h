#pragma once
// The options every model-reading command shares (model, dims, cost source)
// and the loading they imply.
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli/stage_timer.h"
#include "ir/costs.h"
#include "ir/onnx_loader.h"

namespace memplan::cli {

struct ModelOptions {
  std::string model;      // a training graph file or an artifacts folder (ir/ort_artifacts.h)
  std::string optimizer;  // --optimizer: ONNX Runtime's optimizer model beside a file
  std::vector<std::string> dims;  // name=value
  std::string costs;              // memplan.costs JSON
  std::string profile;            // ONNX Runtime profiler JSON
  std::string device = "a100-40gb";
  std::string loss;

  void add_to(CLI::App& cmd);
};

struct ModelInputs {
  ir::LoadedModel model;
  ir::NodeCosts costs;
  std::vector<std::string> warnings;  // loader's and costs' together
};

// Loads the model and attaches costs; throws memplan::Error. With a timer:
// "read_costs", "load_model" and "node_costs" as stages.
ModelInputs load_inputs(const ModelOptions& options);
ModelInputs load_inputs(const ModelOptions& options, StageTimer& timer);

// For the commands that write or read ONNX (rewrite, explain): a model
// given with its optimizer (a folder or --optimizer) is refused in one line,
// since only the training graph can be rewritten. `command` names the
// command in it.
void require_training_graph_only(const ModelOptions& options, const std::string& command);

// Without --dim, bind the dims a plan was made for (plan.json's
// model.dims): a plan names them so it can be checked without repeating them.
void dims_from_plan(const nlohmann::json& plan_doc, ModelOptions& model);

// Prints each warning as one "memplan: warning: …" line on stderr.
void print_warnings(const std::vector<std::string>& warnings);

}  // namespace memplan::cli
