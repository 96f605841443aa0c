#pragma once
// Where the model argument's files are: a training graph file (with the
// optimizer model named beside it, or none), or the folder ONNX Runtime's
// generate_artifacts writes (training_model.onnx, optimizer_model.onnx,
// checkpoint, eval_model.onnx). Nothing is guessed from a file's name:
// the pair comes from the folder or is named.
#include <string>
#include <vector>

#include "ir/onnx_loader.h"

namespace memplan::ir {

inline constexpr const char* kTrainingModelFile = "training_model.onnx";
inline constexpr const char* kOptimizerModelFile = "optimizer_model.onnx";

struct ModelSources {
  std::string training;   // the training graph file
  std::string optimizer;  // ONNX Runtime's optimizer model, empty for none
  bool folder = false;    // given as an artifacts folder
};

// `model` is a file or an artifacts folder; `optimizer` names the optimizer
// model beside a file (empty: none). A folder without optimizer_model.onnx
// adds a warning (the training graph alone is modelled). Throws UsageError
// for `optimizer` given with a folder, InputError for a folder without
// training_model.onnx.
ModelSources model_sources(const std::string& model, const std::string& optimizer,
                           std::vector<std::string>& warnings);

// load_model() of the training graph, with the optimizer's steps when named.
LoadedModel load_sources(const ModelSources& sources, const LoadOptions& options);

}  // namespace memplan::ir
