#pragma once
#include <chrono>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "onnx/onnx_pb.h"

namespace memplan::ir {

// How resolve_types runs ONNX's shape inference. libonnx 1.12 crashes on
// some malformed models (and could loop), which memplan must turn into an
// error, so by default the inference runs in a forked child
// (ir/isolated_call.h) and only its result comes back.
struct ShapeInferenceIsolation {
  // False: in this process. The libFuzzer targets need that, to see the
  // crashes; MEMPLAN_INPROCESS_SHAPES=1 in the environment does the same.
  bool isolated = true;
  // An isolated inference still running after this long is killed and the
  // model refused (gpt2_xl, 6610 nodes, takes well under a second).
  std::chrono::milliseconds timeout = std::chrono::seconds(120);
  // Tests only: runs in the child just before the inference, to stand in
  // for a crash or a hang inside libonnx. Ignored in-process.
  std::function<void()> in_child_before_inference;
};

// Types of every value of the main graph that ONNX shape inference (with
// data propagation and our training-op rules) can tell, by name. The model
// must have its symbolic dims bound already. In-process the model is changed
// in place (value_info grows); isolated, the child works on its own copy and
// `model` is left as it was; the types and warnings are the same either way.
// Where a gradient op has no rule, an output named "<X>_grad" (ONNX
// Runtime's naming) takes X's shape: a gradient has its variable's shape.
// Throws InputError, prefixed with `where`, when the isolated inference
// crashes or runs past the timeout.
// `meanwhile`, when given, runs once in this process while the isolated
// inference runs (after it, in-process): work that needs no types overlaps
// the child's (synth100k: building the graph's nodes, 0.45 s of 3.7 s).
std::unordered_map<std::string, onnx::TypeProto> resolve_types(
    onnx::ModelProto& model, const std::string& where, const ShapeInferenceIsolation& isolation,
    std::vector<std::string>& warnings, const std::function<void()>& meanwhile = {});

}  // namespace memplan::ir
