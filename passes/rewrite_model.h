#pragma once
// The rewrite pass: a plan applied to its ONNX training graph. The result
// computes what the original computes, in the plan's order, with the plan's
// transfers and recomputes as nodes:
//   compute N    -> N as it is, reading the current copy of each input;
//   swap_out T   -> ai.memplan SwapOut(T) -> `T_host` (the host copy);
//   swap_in T    -> ai.memplan SwapIn(T_host) -> `T_swapin` (`_swapin_2`, …),
//                   read by every later reader of T until the next reload;
//                   where T = Transpose(X) or X times a constant scalar, X is
//                   swapped and the op made again after SwapIn (swap_fold.h);
//   recompute N  -> a clone of N whose outputs that were not resident are
//                   renamed `<out>_recompute` (`_recompute_2`, …) and read by
//                   the later readers (ONNX Runtime's own naming);
//   free T       -> nothing (a value's life ends at its last reader).
// SwapOut/SwapIn are model-local functions with an Identity body (see
// swap_functions.h); the plan's summary goes in metadata_props.
#include <string_view>

#include "ir/graph.h"
#include "onnx/onnx_pb.h"
#include "passes/rewrite_options.h"
#include "planner/plan.h"

namespace memplan::passes {

// Each recompute clone's doc_string: this prefix, then the original node's
// name; `explain` finds the clones by it.
inline constexpr std::string_view kRecomputeDoc = "memplan:recompute:";
// A reloaded value's op made again (passes/swap_fold.h): this prefix, then
// the original op's name.
inline constexpr std::string_view kRefoldDoc = "memplan:refold:";

// `graph` is `original` as ir::load_model() loaded it and `plan` a plan for
// that graph. Throws InvalidPlanError when the plan breaks a step rule of
// PLAN_FORMAT.md, was made for another model (sizes, sha256) or starts
// tensors on the host (`initial_host`: ONNX cannot say so), InputError
// when the graph is not the model's. The plan's timing and budget are not
// checked (planner::validate does that).
onnx::ModelProto rewrite_model(const onnx::ModelProto& original, const ir::Graph& graph,
                               const planner::Plan& plan, const RewriteOptions& options);

}  // namespace memplan::passes
