// libFuzzer target: bytes -> plan.json reader -> plan against a fixed graph
// (the mlp fixture, batch=4) -> validator. The graph is loaded once; every
// input is a candidate plan for it, so the fuzzer explores the reader's
// checks of names and ids and the validator's rules, not the ONNX loader.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "fuzz/fuzz_support.h"
#include "ir/onnx_loader.h"
#include "planner/plan_json.h"
#include "planner/plan_validator.h"

#ifndef MEMPLAN_FIXTURES
#error "MEMPLAN_FIXTURES must name tests/fixtures"
#endif

namespace {

const memplan::ir::Graph& graph() {
  static const memplan::ir::LoadedModel model = [] {
    memplan::ir::LoadOptions options;
    options.dims = {{"batch", 4}};
    return memplan::ir::load_model(std::string(MEMPLAN_FIXTURES) + "/mlp.training.onnx", options);
  }();
  return model.graph;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static memplan::fuzz::ScratchFile file(".plan.json");
  const memplan::ir::Graph& g = graph();
  const std::string& path = file.write(data, size);
  memplan::fuzz::expect_only_memplan_errors([&] {
    memplan::planner::Plan plan = memplan::planner::read_plan_file(g, path);
    memplan::planner::Validation v = memplan::planner::validate(g, plan);
    (void)v;
  });
  return 0;
}
