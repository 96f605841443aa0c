#include "passes/rewrite_file.h"

#include "passes/rewrite_model.h"
#include "report/chrome_trace.h"
#include "util/errors.h"
#include "util/text_file.h"

namespace memplan::passes {

PlanSummary write_rewritten_model(const onnx::ModelProto& original, const ir::Graph& graph,
                                  const planner::Plan& plan, const RewriteOptions& options,
                                  const std::string& path) {
  onnx::ModelProto model = rewrite_model(original, graph, plan, options);
  std::string bytes;
  // Protobuf refuses messages over 2 GiB; a training graph with its weights
  // inline can be that large.
  if (!model.SerializeToString(&bytes))
    throw InputError(path +
                     ": cannot serialize the rewritten model (over protobuf's 2 GiB limit?)");
  util::write_file_atomically(path, bytes);
  auto summary = read_summary(model, path);
  return *summary;
}

}  // namespace memplan::passes
