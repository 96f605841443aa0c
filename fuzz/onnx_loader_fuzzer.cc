// libFuzzer target: bytes -> ModelProto -> build_graph (dims bound, shapes
// inferred, classified) -> what `memplan inspect` computes from the graph.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz/fuzz_support.h"
#include "ir/baseline_memory.h"
#include "ir/device_presets.h"
#include "ir/liveness.h"
#include "ir/node_costs.h"
#include "ir/onnx_loader.h"

namespace {

// Every symbolic dim of a graph input bound to a small value, so inputs get
// past dim binding into shape inference; `batch`/`seq` as the fixtures name
// them. Values differ per name so mismatched dims stay mismatched.
memplan::ir::LoadOptions options_for(const onnx::ModelProto& model) {
  memplan::ir::LoadOptions options;
  // In this process: a crash inside libonnx is what the fuzzer is here to
  // find, and isolation would turn it into an InputError.
  options.shape_inference.isolated = false;
  options.dims = {{"batch", 2}, {"seq", 3}};
  if (!model.has_graph()) return options;
  for (const auto& input : model.graph().input()) {
    if (!input.type().has_tensor_type()) continue;
    for (const auto& d : input.type().tensor_type().shape().dim())
      if (d.has_dim_param())
        options.dims.emplace(d.dim_param(), 2 + static_cast<int>(d.dim_param().size() % 3));
  }
  return options;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  onnx::ModelProto model;
  // load_model's own check: bytes protobuf rejects are one InputError.
  if (!model.ParseFromArray(data, static_cast<int>(size))) return 0;
  memplan::fuzz::expect_only_memplan_errors([&] {
    std::vector<std::string> warnings;
    memplan::ir::Graph graph =
        memplan::ir::build_graph(model, options_for(model), "fuzz.onnx", warnings);
    memplan::ir::Liveness liveness(graph);
    memplan::ir::BaselineMemory base = memplan::ir::baseline_memory(graph, liveness);
    (void)base;
    memplan::ir::NodeCosts costs = memplan::ir::make_node_costs(
        graph, memplan::ir::device_preset("a100-40gb"), {}, "roofline a100-40gb", warnings);
    (void)costs;
  });
  return 0;
}
