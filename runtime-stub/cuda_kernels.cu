#include "runtime-stub/cuda_kernels.cuh"
#include "runtime-stub/cuda_raii.cuh"
#include "runtime-stub/pattern.h"

namespace memplan::runtime::cuda {
namespace {

constexpr unsigned kThreads = 256;

__device__ unsigned found_in(const unsigned char* arena, const DeviceRange& r,
                             unsigned long long thread, unsigned long long threads) {
  // Offsets are multiples of the layout's alignment (256), so word loads
  // are aligned.
  const auto* words = reinterpret_cast<const unsigned long long*>(arena + r.offset);
  const unsigned long long n = r.bytes / 8;
  for (unsigned long long i = thread; i < n; i += threads) {
    const unsigned long long w = words[i];
    if (w != pattern_word(r.seed, i))
      return w == kPoisonWord ? static_cast<unsigned>(CheckOutcome::kFreedMemory)
                              : static_cast<unsigned>(CheckOutcome::kWrongBytes);
  }
  if (thread == 0) {
    const unsigned long long last = pattern_word(r.seed, n);
    const unsigned char* tail = arena + r.offset + 8 * n;
    for (unsigned b = 0; b < r.bytes % 8; ++b)
      if (tail[b] != static_cast<unsigned char>(last >> (8 * b)))
        return tail[b] == kPoisonByte ? static_cast<unsigned>(CheckOutcome::kFreedMemory)
                                      : static_cast<unsigned>(CheckOutcome::kWrongBytes);
  }
  return 0;
}

__device__ void write(unsigned char* arena, const DeviceRange& r, unsigned long long thread,
                      unsigned long long threads) {
  auto* words = reinterpret_cast<unsigned long long*>(arena + r.offset);
  const unsigned long long n = r.bytes / 8;
  for (unsigned long long i = thread; i < n; i += threads) words[i] = pattern_word(r.seed, i);
  if (thread == 0) {
    const unsigned long long last = pattern_word(r.seed, n);
    unsigned char* tail = arena + r.offset + 8 * n;
    for (unsigned b = 0; b < r.bytes % 8; ++b)
      tail[b] = static_cast<unsigned char>(last >> (8 * b));
  }
}

__global__ void stub_kernel(unsigned char* arena, const DeviceRange* ranges, unsigned reads,
                            unsigned writes, long long cycles, unsigned* outcomes,
                            unsigned long long* mismatches) {
  const long long start = clock64();
  const unsigned long long thread =
      blockIdx.x * static_cast<unsigned long long>(blockDim.x) + threadIdx.x;
  const unsigned long long threads = static_cast<unsigned long long>(gridDim.x) * blockDim.x;
  for (unsigned r = 0; r < reads; ++r) {
    const unsigned found = found_in(arena, ranges[r], thread, threads);
    if (found != 0) {
      atomicCAS(&outcomes[ranges[r].check], 0u, found);
      atomicAdd(mismatches, 1ull);
    }
  }
  for (unsigned w = 0; w < writes; ++w) write(arena, ranges[reads + w], thread, threads);
  // The node's time: one thread holds the kernel open until it has passed.
  if (thread == 0)
    while (clock64() - start < cycles) {
    }
}

__global__ void spin_kernel(long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
}

}  // namespace

void launch_stub(cudaStream_t stream, unsigned blocks, unsigned char* arena,
                 const DeviceRange* ranges, unsigned reads, unsigned writes, long long cycles,
                 unsigned* outcomes, unsigned long long* mismatches) {
  stub_kernel<<<blocks, kThreads, 0, stream>>>(arena, ranges, reads, writes, cycles, outcomes,
                                               mismatches);
  check(cudaGetLastError(), "launching the stub kernel");
}

void launch_spin(cudaStream_t stream, long long cycles) {
  spin_kernel<<<1, 1, 0, stream>>>(cycles);
  check(cudaGetLastError(), "launching the calibration kernel");
}

}  // namespace memplan::runtime::cuda
