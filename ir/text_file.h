#pragma once
#include <string>

namespace memplan::ir {

// The whole file as bytes; InputError naming the path when it is missing, a
// directory, or unreadable.
std::string read_text_file(const std::string& path);

}  // namespace memplan::ir
