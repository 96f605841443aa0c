#pragma once
// The bytes a stub kernel writes into a tensor, and the poison a free leaves
// behind. Shared by the host backend and the CUDA kernels, so both speak of
// the same bytes. Plain constexpr arithmetic: nvcc compiles it for the device.
#include <cstdint>
#include <string_view>

#if defined(__CUDACC__)
#define MEMPLAN_HOST_DEVICE __host__ __device__
#else
#define MEMPLAN_HOST_DEVICE
#endif

namespace memplan::runtime {

// Freed memory holds this byte everywhere. A read that finds it read memory
// that was released (or never written since the arena was made).
inline constexpr std::uint8_t kPoisonByte = 0xF0;
inline constexpr std::uint64_t kPoisonWord = 0xF0F0F0F0F0F0F0F0ull;

// Steps between consecutive words of a pattern: odd, so word i and word j of
// one tensor differ for i != j, and a copy that lands a few words off fails.
inline constexpr std::uint64_t kPatternStride = 0x9E3779B97F4A7C15ull;

// FNV-1a of the tensor's name: what a tensor holds depends only on its name,
// so a recompute or a swap round trip must bring back exactly the same bytes.
constexpr std::uint64_t pattern_seed(std::string_view name) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (char c : name) {
    h ^= static_cast<std::uint8_t>(c);
    h *= 0x100000001b3ull;
  }
  // Never the poison's first word, so word 0 of a pattern is never poison.
  return h == kPoisonWord ? h + 1 : h;
}

// Odd and unlike kPatternStride: the seed of a tensor after its k-th
// in-place write (ir/in_place_writes.h) differs from its seed before in
// every word, so a host copy made before the write fails a check after it.
inline constexpr std::uint64_t kWriteStride = 0xD6E8FEB86659FD93ull;

// The seed of a tensor named with seed `seed` once it has been written in
// place `writes` times (0: as its producer made it).
MEMPLAN_HOST_DEVICE constexpr std::uint64_t written_seed(std::uint64_t seed, std::uint64_t writes) {
  const std::uint64_t s = seed + writes * kWriteStride;
  return s == kPoisonWord ? s + 1 : s;
}

// Word i (little-endian, 8 bytes at byte offset 8*i) of the pattern.
MEMPLAN_HOST_DEVICE constexpr std::uint64_t pattern_word(std::uint64_t seed, std::uint64_t i) {
  return seed + i * kPatternStride;
}

// What a check found in a tensor's bytes; values are stored per check in the
// backends' outcome arrays (0 = fine).
enum class CheckOutcome : std::uint8_t { kOk = 0, kWrongBytes = 1, kFreedMemory = 2 };

}  // namespace memplan::runtime
