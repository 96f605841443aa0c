#pragma once
// The rewrite written to a file, as `memplan rewrite` and `memplan plan` do.
#include <string>

#include "ir/graph.h"
#include "onnx/onnx_pb.h"
#include "passes/plan_summary.h"
#include "passes/rewrite_options.h"
#include "planner/plan.h"

namespace memplan::passes {

// rewrite_model(), serialized and written atomically (a temporary file
// renamed over `path`): a failure leaves no file and no half of one. Returns
// the summary written into the model. Throws what rewrite_model() throws,
// and InputError naming `path` when it cannot be written.
PlanSummary write_rewritten_model(const onnx::ModelProto& original, const ir::Graph& graph,
                                  const planner::Plan& plan, const RewriteOptions& options,
                                  const std::string& path);

}  // namespace memplan::passes
