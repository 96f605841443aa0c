#include "ir/text_file.h"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
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

void write_file_atomically(const std::string& path, const std::string& text) {
  namespace fs = std::filesystem;
  // Unique per process and call, in the target's directory so that the
  // rename stays on one file system and is atomic.
  static std::atomic<unsigned> counter{0};
  fs::path target(path);
  fs::path temp = target;
  temp += ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
  std::FILE* f = std::fopen(temp.c_str(), "wb");
  if (!f) throw InputError(path + ": cannot write: " + std::strerror(errno));
  bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  int err = ok ? 0 : errno;
  if (std::fclose(f) != 0 && ok) {
    ok = false;
    err = errno;
  }
  std::error_code ec;
  if (ok) {
    fs::rename(temp, target, ec);
    if (!ec) return;
  }
  std::string why = ec ? ec.message() : std::strerror(err);
  fs::remove(temp, ec);
  throw InputError(path + ": cannot write: " + why);
}

}  // namespace memplan::ir
