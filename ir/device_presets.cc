#include "ir/device_presets.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <string>

#include "util/errors.h"

namespace memplan::ir {
namespace {

constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;
constexpr double kGB = 1e9;
constexpr double kTFLOPS = 1e12;
constexpr double kLaunch = 5e-6;
// Achievable pinned host<->device rates per direction over an x16 link; the
// theoretical rates are ~15.8, ~31.5 and ~63 GB/s.
constexpr double kPcie3 = 12 * kGB;
constexpr double kPcie4 = 24 * kGB;
constexpr double kPcie5 = 48 * kGB;

std::vector<DeviceSpec> make_presets() {
  return {
      {.name = "v100-32gb",
       .memory_bytes = 32 * kGiB,
       .h2d_bytes_per_s = kPcie3,
       .d2h_bytes_per_s = kPcie3,
       .peak_flops = 15.7 * kTFLOPS,
       .memory_bytes_per_s = 900 * kGB,
       .launch_seconds = kLaunch,
       .source = "NVIDIA Tesla V100 datasheet (2018), SXM2 32GB: 900 GB/s HBM2, 15.7 TFLOPS "
                 "FP32 (Volta has no TF32; its 125 TFLOPS tensor rate is FP16); PCIe 3.0 x16 "
                 "~12 GB/s achievable pinned"},
      {.name = "v100-16gb",
       .memory_bytes = 16 * kGiB,
       .h2d_bytes_per_s = kPcie3,
       .d2h_bytes_per_s = kPcie3,
       .peak_flops = 15.7 * kTFLOPS,
       .memory_bytes_per_s = 900 * kGB,
       .launch_seconds = kLaunch,
       .source = "NVIDIA Tesla V100 datasheet (2018), SXM2 16GB: 900 GB/s HBM2, 15.7 TFLOPS "
                 "FP32 (the 32GB part's figures, half its memory); PCIe 3.0 x16 ~12 GB/s "
                 "achievable pinned"},
      {.name = "a100-40gb",
       .memory_bytes = 40 * kGiB,
       .h2d_bytes_per_s = kPcie4,
       .d2h_bytes_per_s = kPcie4,
       .peak_flops = 156 * kTFLOPS,
       .memory_bytes_per_s = 1555 * kGB,
       .launch_seconds = kLaunch,
       .source = "NVIDIA A100 datasheet (2021), SXM 40GB: 1555 GB/s HBM2, 156 TFLOPS TF32 "
                 "dense; PCIe 4.0 x16 ~24 GB/s achievable pinned"},
      {.name = "a100-80gb",
       .memory_bytes = 80 * kGiB,
       .h2d_bytes_per_s = kPcie4,
       .d2h_bytes_per_s = kPcie4,
       .peak_flops = 156 * kTFLOPS,
       .memory_bytes_per_s = 2039 * kGB,
       .launch_seconds = kLaunch,
       .source = "NVIDIA A100 datasheet (2021), SXM 80GB: 2039 GB/s HBM2e, 156 TFLOPS TF32 "
                 "dense; PCIe 4.0 x16 ~24 GB/s achievable pinned"},
      {.name = "h100-80gb",
       .memory_bytes = 80 * kGiB,
       .h2d_bytes_per_s = kPcie5,
       .d2h_bytes_per_s = kPcie5,
       .peak_flops = 494.7 * kTFLOPS,
       .memory_bytes_per_s = 3350 * kGB,
       .launch_seconds = kLaunch,
       .source = "NVIDIA H100 datasheet (2023), SXM 80GB: 3.35 TB/s HBM3, 989 TFLOPS TF32 with "
                 "sparsity = 494.7 dense; PCIe 5.0 x16 ~48 GB/s achievable pinned"},
      {.name = "h200-141gb",
       .memory_bytes = 141 * kGiB,
       .h2d_bytes_per_s = kPcie5,
       .d2h_bytes_per_s = kPcie5,
       .peak_flops = 494.7 * kTFLOPS,
       .memory_bytes_per_s = 4800 * kGB,
       .launch_seconds = kLaunch,
       .source = "NVIDIA H200 datasheet (2024), SXM 141GB: 4.8 TB/s HBM3e, 989 TFLOPS TF32 with "
                 "sparsity = 494.7 dense; PCIe 5.0 x16 ~48 GB/s achievable pinned"},
      {.name = "rtx4090-24gb",
       .memory_bytes = 24 * kGiB,
       .h2d_bytes_per_s = kPcie4,
       .d2h_bytes_per_s = kPcie4,
       .peak_flops = 82.6 * kTFLOPS,
       .memory_bytes_per_s = 1008 * kGB,
       .launch_seconds = kLaunch,
       .source = "NVIDIA Ada GPU architecture whitepaper (2022), GeForce RTX 4090: 1008 GB/s "
                 "GDDR6X, 82.6 TFLOPS TF32 dense (165.2 with sparsity); PCIe 4.0 x16 ~24 GB/s "
                 "achievable pinned"},
  };
}

bool iequals(std::string_view a, std::string_view b) {
  return std::ranges::equal(a, b, [](char x, char y) {
    return std::tolower(static_cast<unsigned char>(x)) ==
           std::tolower(static_cast<unsigned char>(y));
  });
}

}  // namespace

const std::vector<DeviceSpec>& device_presets() {
  static const std::vector<DeviceSpec> presets = make_presets();
  return presets;
}

const DeviceSpec& device_preset(std::string_view name) {
  const auto& presets = device_presets();
  for (const DeviceSpec& d : presets)
    if (iequals(d.name, name)) return d;
  std::string known;
  for (const DeviceSpec& d : presets) known += (known.empty() ? "" : ", ") + d.name;
  throw UsageError("unknown device '" + std::string(name) + "'; known: " + known);
}

}  // namespace memplan::ir
