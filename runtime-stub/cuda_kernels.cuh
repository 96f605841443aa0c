#pragma once
// The stub kernels (cuda_kernels.cu) and their launchers.
#include <cuda_runtime.h>

#include <cstdint>

namespace memplan::runtime::cuda {

// One tensor's range, as the kernels read it from device memory.
struct DeviceRange {
  std::uint64_t offset = 0;
  std::uint64_t bytes = 0;
  std::uint64_t seed = 0;
  std::uint32_t check = 0;
  std::uint32_t unused = 0;
};

// A compute or recompute: checks `reads` ranges, then writes `writes`
// ranges (they follow the reads in `ranges`), and lasts at least `cycles`
// SM clock cycles from its start. A check that fails stores its
// CheckOutcome in outcomes[check] (first finder wins) and adds one to
// `*mismatches` per thread that saw a wrong word.
void launch_stub(cudaStream_t stream, unsigned blocks, unsigned char* arena,
                 const DeviceRange* ranges, unsigned reads, unsigned writes, long long cycles,
                 unsigned* outcomes, unsigned long long* mismatches);

// Spins one thread for `cycles` (the calibration of cycles per second).
void launch_spin(cudaStream_t stream, long long cycles);

}  // namespace memplan::runtime::cuda
