#include "util/text_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "util/errors.h"
#include "util/posix_io.h"

namespace memplan::util {

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

namespace {

std::filesystem::path temp_name_for(const std::filesystem::path& target) {
  // Unique per process and call, in the target's directory so that the
  // rename stays on one file system and is atomic.
  static std::atomic<unsigned> counter{0};
  std::filesystem::path temp = target;
  temp += ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
  return temp;
}

}  // namespace

void write_file_atomically(const std::string& path, const std::string& text) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  const fs::path temp = temp_name_for(target);
  std::error_code ec;
  auto fail = [&](int err) {
    fs::remove(temp, ec);
    throw InputError(path + ": cannot write: " + std::strerror(err));
  };

  // An unnamed file (O_TMPFILE) vanishes if the process is killed while it
  // is written, so even SIGKILL leaves nothing behind; it is linked under
  // the temporary name only once complete (linkat cannot replace the
  // target, hence the rename after). Without O_TMPFILE or /proc, a named
  // temporary is written instead.
  bool named = false;
  {
    UniqueFd fd(::open(dir.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666));
    if (fd.get() < 0 && errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL) fail(errno);
    if (fd.get() >= 0) {
      if (!write_all(fd.get(), text.data(), text.size())) fail(errno);
      std::string self = "/proc/self/fd/" + std::to_string(fd.get());
      named = ::linkat(AT_FDCWD, self.c_str(), AT_FDCWD, temp.c_str(), AT_SYMLINK_FOLLOW) == 0;
      if (named && fd.close() != 0) fail(errno);
    }
  }
  if (!named) {
    UniqueFd fd(::open(temp.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0666));
    if (fd.get() < 0) fail(errno);
    if (!write_all(fd.get(), text.data(), text.size()) || fd.close() != 0) fail(errno);
  }
  fs::rename(temp, target, ec);
  if (ec) {
    int err = ec.value();
    fail(err);
  }
}

}  // namespace memplan::util
