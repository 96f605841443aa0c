#pragma once
// The two POSIX pieces more than one file needs: a descriptor that closes
// itself, and a write that finishes. Neither allocates, so a forked child
// may use them (ir/isolated_call).
#include <unistd.h>

#include <cerrno>
#include <cstddef>

namespace memplan::util {

class UniqueFd {
 public:
  explicit UniqueFd(int fd) : fd_(fd) {}
  ~UniqueFd() { reset(); }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;

  int get() const { return fd_; }
  // No retry on EINTR: Linux frees the descriptor even then.
  void reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  // close()'s result, which can carry a deferred write error a writer must
  // hear of.
  int close() {
    int rc = ::close(fd_);
    fd_ = -1;
    return rc;
  }

 private:
  int fd_;
};

// Writes all `size` bytes, resuming after EINTR and short writes; false with
// errno set when the descriptor refuses.
inline bool write_all(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    ssize_t n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) errno = EIO;
    if (n <= 0) return false;
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace memplan::util
