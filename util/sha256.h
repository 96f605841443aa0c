#pragma once
#include <string>
#include <string_view>

namespace memplan::util {

// Lower-case hex SHA-256 of the bytes (OpenSSL's EVP digest).
std::string sha256_hex(std::string_view bytes);

}  // namespace memplan::util
