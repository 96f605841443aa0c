// libFuzzer target: bytes -> memplan.costs reader -> device overrides.
#include <cstddef>
#include <cstdint>

#include "fuzz/fuzz_support.h"
#include "ir/costs_file.h"
#include "ir/device_presets.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static memplan::fuzz::ScratchFile file(".json");
  const std::string& path = file.write(data, size);
  memplan::fuzz::expect_only_memplan_errors([&] {
    memplan::ir::CostsFile costs = memplan::ir::read_costs_file(path);
    // What `inspect --costs` does next with the file's device fields.
    memplan::ir::DeviceSpec device =
        memplan::ir::apply_overrides(memplan::ir::device_preset("a100-40gb"), costs);
    (void)device;
  });
  return 0;
}
