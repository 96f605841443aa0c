#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/shape_resolver.h"
#include "onnx/onnx_pb.h"

namespace memplan::ir {

struct LoadOptions {
  std::map<std::string, std::int64_t> dims;           // --dim name=value
  std::map<std::string, std::uint64_t> tensor_bytes;  // costs `tensors` overrides
  // Where set, the overrides come from here instead, asked for once, just
  // before shape inference: a costs file can be read on another thread while
  // the model is read and checked, and that thread must be done by then,
  // since the inference forks (util/isolated_call.h). What it throws, the
  // load throws.
  std::function<std::map<std::string, std::uint64_t>()> tensor_bytes_later;
  std::optional<std::string> loss;          // the loss tensor, if not found
  ShapeInferenceIsolation shape_inference;  // isolated in a child by default
};

// The optimizer model whose steps a LoadedModel's graph ends with.
struct OptimizerModel {
  std::string path;
  std::string sha256;     // of the file's bytes, lower-case hex
  std::size_t steps = 0;  // AdamWStep nodes appended, one per trainable parameter
};

// A model file as read: the graph for the analyses, the proto for the
// rewrite pass, and what the loader had to say.
struct LoadedModel {
  std::string path;
  std::string sha256;  // of the file's bytes, lower-case hex
  // The training graph as given: with an optimizer, `graph` holds more
  // (its steps), which no rewrite of `proto` would carry.
  onnx::ModelProto proto;
  Graph graph;
  std::vector<std::string> warnings;
  std::optional<OptimizerModel> optimizer;
};

// Reads, binds dims, infers shapes, builds and classifies the graph. Throws
// InputError naming the file and the node, tensor or dim at fault.
LoadedModel load_model(const std::string& path, const LoadOptions& options);

// One iteration as ONNX Runtime's training API runs it: the training graph,
// then ONNX Runtime's AdamW optimizer model as one step per parameter
// (adamw_steps.h). `path` and `sha256` stay the training graph's.
LoadedModel load_model(const std::string& path, const std::string& optimizer_path,
                       const LoadOptions& options);

// The same from a parsed proto; `where` prefixes messages (the file name).
Graph build_graph(const onnx::ModelProto& model, const LoadOptions& options,
                  const std::string& where, std::vector<std::string>& warnings);

}  // namespace memplan::ir
