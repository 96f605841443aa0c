#include "ir/text_file.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "ir/errors.h"

namespace memplan::ir {

std::string read_text_file(const std::string& path) {
  std::error_code ec;
  auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status)) throw InputError(path + ": no such file");
  if (std::filesystem::is_directory(status)) throw InputError(path + ": is a directory");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot be opened for reading");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw InputError(path + ": read failed");
  return text.str();
}

}  // namespace memplan::ir
