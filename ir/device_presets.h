#pragma once
// The accelerators the analytical model knows by name (COSTS_FORMAT.md §3).
#include <string_view>
#include <vector>

#include "ir/device.h"

namespace memplan::ir {

// Every preset, in a fixed order (oldest GPU first). Conventions shared by
// all of them, so figures compare across presets:
// - memory_bytes: the marketed capacity read as GiB (40 GB -> 40 * 2^30); the
//   usable amount is a little lower (CUDA context), which the budget covers.
// - peak_flops: the dense (no sparsity) tensor-core rate for float32 inputs,
//   i.e. TF32 on Ampere and later; Volta has no TF32, so its FP32 rate.
// - h2d/d2h: achievable pinned-memory copy rates, not the link's theoretical
//   rate (PCIe 3 x16 ~12 GB/s, PCIe 4 x16 ~24 GB/s, PCIe 5 x16 ~48 GB/s).
// - launch_seconds: 5 us per kernel (launch plus runtime dispatch).
const std::vector<DeviceSpec>& device_presets();

// The preset with this name, compared case-insensitively. Throws UsageError
// naming the known presets when there is none.
const DeviceSpec& device_preset(std::string_view name);

}  // namespace memplan::ir
