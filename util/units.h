#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace memplan::util {

// "1.50 GiB", "512 B": binary units, for people.
std::string human_bytes(std::uint64_t bytes);
// "1.25 ms", "3.40 s".
std::string human_seconds(double seconds);
// "12GiB", "800MB", "1e9", "4096": bytes; throws UsageError naming `what`.
std::uint64_t parse_bytes(std::string_view text, std::string_view what);

}  // namespace memplan::util
