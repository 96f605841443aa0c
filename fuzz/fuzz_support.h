#pragma once
// Shared by the libFuzzer targets: the parsers under test take a path, so the
// input goes through a file, and the contract (bad input -> memplan::Error,
// nothing else) is enforced by aborting on anything else, which libFuzzer
// reports as a crash with the input that caused it.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <new>
#include <string>

#include "util/errors.h"

namespace memplan::fuzz {

// One file per fuzzing process, rewritten for every input; removed at exit.
// In $TMPDIR if set, else /dev/shm (a disk-backed /tmp made the file targets
// 25x slower, waiting on writes), else /tmp.
class ScratchFile {
 public:
  explicit ScratchFile(const char* suffix) {
    const char* dir = std::getenv("TMPDIR");
    std::string base = dir != nullptr && *dir != '\0'  ? dir
                       : access("/dev/shm", W_OK) == 0 ? "/dev/shm"
                                                       : "/tmp";
    path_ = base + "/memplan-fuzz-XXXXXX" + suffix;
    int fd = mkstemps(path_.data(), static_cast<int>(std::char_traits<char>::length(suffix)));
    if (fd < 0) {
      std::perror("memplan fuzz: mkstemps");
      std::abort();
    }
    close(fd);
  }
  ~ScratchFile() { unlink(path_.c_str()); }
  ScratchFile(const ScratchFile&) = delete;
  ScratchFile& operator=(const ScratchFile&) = delete;

  const std::string& write(const std::uint8_t* data, std::size_t size) {
    std::FILE* f = std::fopen(path_.c_str(), "wb");
    if (f == nullptr || (size > 0 && std::fwrite(data, 1, size, f) != size) ||
        std::fclose(f) != 0) {
      std::perror("memplan fuzz: writing the scratch file");
      std::abort();
    }
    return path_;
  }

 private:
  std::string path_;
};

// An error message must be one line: the CLI prints it as `memplan: error:
// <what>` and scripts read exactly one line. Checked only when
// MEMPLAN_FUZZ_STRICT_MESSAGES=1, so a run can look for crashes first.
inline void check_message(const std::exception& e) {
  static const bool strict = [] {
    const char* v = std::getenv("MEMPLAN_FUZZ_STRICT_MESSAGES");
    return v != nullptr && std::string(v) == "1";
  }();
  if (!strict) return;
  for (const char* p = e.what(); *p != '\0'; ++p) {
    if (*p == '\n' || *p == '\r') {
      std::fprintf(stderr, "memplan fuzz: error message spans lines: %s\n", e.what());
      std::abort();
    }
  }
}

// Runs `body`; memplan::Error is the expected outcome of bad input. Any other
// exception breaks the contract and aborts, naming its message.
template <typename F>
void expect_only_memplan_errors(F&& body) {
  try {
    body();
  } catch (const memplan::Error& e) {
    check_message(e);
  } catch (const std::bad_alloc&) {
    // Allocation failures are reported by libFuzzer's -malloc_limit_mb /
    // -rss_limit_mb as out-of-memory findings before they get here; one
    // that does get here means a huge request the input asked for.
    std::fprintf(stderr, "memplan fuzz: std::bad_alloc escaped\n");
    std::abort();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "memplan fuzz: non-memplan exception escaped: %s\n", e.what());
    std::abort();
  } catch (...) {
    std::fprintf(stderr, "memplan fuzz: non-std exception escaped\n");
    std::abort();
  }
}

}  // namespace memplan::fuzz
