#pragma once
#include <cstdint>
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
  std::optional<std::string> loss;                    // the loss tensor, if not found
  ShapeInferenceIsolation shape_inference;            // isolated in a child by default
};

// A model file as read: the graph for the analyses, the proto for the
// rewrite pass, and what the loader had to say.
struct LoadedModel {
  std::string path;
  std::string sha256;  // of the file's bytes, lower-case hex
  onnx::ModelProto proto;
  Graph graph;
  std::vector<std::string> warnings;
};

// Reads, binds dims, infers shapes, builds and classifies the graph. Throws
// InputError naming the file and the node, tensor or dim at fault.
LoadedModel load_model(const std::string& path, const LoadOptions& options);

// The same from a parsed proto; `where` prefixes messages (the file name).
Graph build_graph(const onnx::ModelProto& model, const LoadOptions& options,
                  const std::string& where, std::vector<std::string>& warnings);

}  // namespace memplan::ir
