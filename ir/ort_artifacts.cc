#include "ir/ort_artifacts.h"

#include <filesystem>

#include "util/errors.h"

namespace memplan::ir {

ModelSources model_sources(const std::string& model, const std::string& optimizer,
                           std::vector<std::string>& warnings) {
  namespace fs = std::filesystem;
  std::error_code ec;
  ModelSources s;
  if (!fs::is_directory(model, ec)) {
    s.training = model;
    s.optimizer = optimizer;
    return s;
  }
  if (!optimizer.empty())
    throw UsageError("--optimizer " + optimizer + ": " + model +
                     " is an artifacts folder, whose optimizer is its " + kOptimizerModelFile);
  const fs::path dir(model);
  s.folder = true;
  s.training = (dir / kTrainingModelFile).string();
  if (!fs::is_regular_file(s.training, ec))
    throw InputError(model + ": not an ONNX Runtime artifacts folder: no " + kTrainingModelFile +
                     " in it (generate_artifacts writes " + kTrainingModelFile + " and " +
                     kOptimizerModelFile + ")");
  const fs::path opt = dir / kOptimizerModelFile;
  if (fs::is_regular_file(opt, ec)) {
    s.optimizer = opt.string();
  } else {
    warnings.push_back(model + ": no " + kOptimizerModelFile +
                       ": the optimizer step is not modelled, only " + kTrainingModelFile);
  }
  return s;
}

LoadedModel load_sources(const ModelSources& sources, const LoadOptions& options) {
  return sources.optimizer.empty() ? load_model(sources.training, options)
                                   : load_model(sources.training, sources.optimizer, options);
}

}  // namespace memplan::ir
