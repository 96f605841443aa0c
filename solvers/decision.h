#pragma once
#include <cstdint>

namespace memplan::solvers {

// What happens to one tensor between its forward and backward uses.
enum class Decision : std::uint8_t { kKeep, kSwap, kRecompute };

}  // namespace memplan::solvers
