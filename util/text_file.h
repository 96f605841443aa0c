#pragma once
#include <string>

namespace memplan::util {

// The whole file as bytes; InputError naming the path when it is missing, a
// directory, or unreadable.
std::string read_text_file(const std::string& path);

// Writes `text` to a temporary file in the same directory and renames it
// over `path`, so a reader never sees half a file and a failure leaves none.
// InputError naming the path when it cannot be written.
void write_file_atomically(const std::string& path, const std::string& text);

}  // namespace memplan::util
