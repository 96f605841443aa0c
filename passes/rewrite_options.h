#pragma once
// What rewrite_model() may be told besides the model, the graph and the plan.
#include <string>

namespace memplan::passes {

struct RewriteOptions {
  // sha256 of the plan file's bytes, recorded in metadata_props. Empty: the
  // sha256 of the plan as write_plan_file() writes it, which is the same
  // thing for a plan memplan wrote.
  std::string plan_sha256;
  // sha256 of the model file's bytes. When set, a plan whose model.sha256
  // differs is rejected: it was made for another model.
  std::string model_sha256;
  // Give the new tensors (host copies, reloads, recomputes) the type of the
  // tensor they copy when the model declares one, so readers of the file see
  // their shapes without running inference.
  bool copy_value_info = true;
};

}  // namespace memplan::passes
