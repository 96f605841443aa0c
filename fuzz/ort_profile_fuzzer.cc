// libFuzzer target: bytes -> ONNX Runtime profile reader.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "fuzz/fuzz_support.h"
#include "ir/ort_profile.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static memplan::fuzz::ScratchFile file(".json");
  const std::string& path = file.write(data, size);
  memplan::fuzz::expect_only_memplan_errors([&] {
    memplan::ir::OrtProfile profile = memplan::ir::read_ort_profile(path);
    // The header promises means of non-negative durations; a NaN here would
    // reach the planner as a time (make_node_costs rejects only what it sees).
    for (const auto& [node, seconds] : profile.node_seconds) {
      if (std::isnan(seconds) || seconds < 0) {
        std::fprintf(stderr, "memplan fuzz: node '%s' got time %g\n", node.c_str(), seconds);
        std::abort();
      }
    }
  });
  return 0;
}
