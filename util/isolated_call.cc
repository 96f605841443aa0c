#include "util/isolated_call.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string_view>
#include <system_error>
#include <thread>
#include <utility>

#include "util/posix_io.h"

namespace memplan::util {
namespace {

using Clock = std::chrono::steady_clock;

// What the child writes: one kind byte, the payload's length (host byte
// order: the reader is our own parent) and the payload. The length tells a
// whole result from one cut short by a crash in the middle of writing.
constexpr char kResult = 'R';
constexpr char kException = 'X';
constexpr std::size_t kHeader = 1 + sizeof(std::uint64_t);

// Exit codes of a child that could not send a result; the parent reports
// them as kExited.
constexpr int kChildWriteFailed = 121;
constexpr int kChildFailed = 122;
constexpr int kParentGone = 123;

[[noreturn]] void throw_errno(const char* what) {
  throw std::system_error(errno, std::generic_category(), what);
}

// poll's timeout for what is left until a deadline, in whole milliseconds
// rounded up; a longer wait just loops.
int poll_ms(Clock::duration left) {
  const auto ms = std::chrono::ceil<std::chrono::milliseconds>(left).count();
  return static_cast<int>(std::clamp<std::int64_t>(ms, 0, 60'000));
}

// A descriptor that polls readable once the process has exited, or -1.
int open_pidfd(pid_t pid) {
#ifdef SYS_pidfd_open
  return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
#else
  (void)pid;
  return -1;
#endif
}

struct ExitInfo {
  bool timed_out = false;  // still running at the deadline: killed
  bool known = false;      // false: reaped by someone else (SIGCHLD ignored)
  int status = 0;          // waitpid's status when known
};

// Owns a child until it is reaped. The destructor, reached when the parent
// leaves early (an exception while reading), kills and reaps it, so neither
// a zombie nor a stray process is left behind.
class ChildProcess {
 public:
  explicit ChildProcess(pid_t pid) : pid_(pid) {}
  ~ChildProcess() {
    if (pid_ > 0) kill_and_wait();
  }
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  // Waits for the child to exit, up to the deadline; past it, kills it. The
  // pipe's EOF comes just before the exit, so this rarely waits; with a
  // timeout (not a blocking waitpid) the deadline holds for a child that
  // closed its end of the pipe early and went on running. A pidfd wakes us
  // the moment it exits; without one (Linux < 5.3), short sleeps.
  ExitInfo wait_until(Clock::time_point deadline) {
    UniqueFd exited(open_pidfd(pid_));
    auto pause = std::chrono::microseconds(50);
    for (;;) {
      int status = 0;
      pid_t r = ::waitpid(pid_, &status, WNOHANG);
      if (r == pid_) {
        pid_ = -1;
        return {false, true, status};
      }
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) {  // ECHILD: with SIGCHLD ignored the kernel reaps it for us
        pid_ = -1;
        return {false, false, 0};
      }
      const auto left = deadline - Clock::now();
      if (left <= Clock::duration::zero()) {
        kill_and_wait();
        return {true, false, 0};
      }
      if (exited.get() >= 0) {
        pollfd p{exited.get(), POLLIN, 0};
        ::poll(&p, 1, poll_ms(left));  // EINTR or not, the loop looks again
      } else {
        std::this_thread::sleep_for(pause);
        pause = std::min(pause * 2, std::chrono::microseconds(10'000));
      }
    }
  }

  void kill_and_wait() {
    if (pid_ <= 0) return;  // kill(-1) would signal every process we may signal
    ::kill(pid_, SIGKILL);
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    pid_ = -1;
  }

 private:
  pid_t pid_;
};

Clock::time_point deadline_after(std::chrono::milliseconds timeout) {
  const auto now = Clock::now();
  // Saturate instead of overflowing for "no real limit" timeouts.
  const auto room =
      std::chrono::duration_cast<std::chrono::milliseconds>(Clock::time_point::max() - now);
  return now + std::min(std::max(timeout, std::chrono::milliseconds(0)), room);
}

// Reads until EOF, while the child writes (a child blocked on a full pipe
// would otherwise never exit). False when the deadline came first. With
// `interrupt`, asks it at least every 100 ms and passes the first yes on to
// the child as SIGINT.
bool drain(int fd, Clock::time_point deadline, std::string& out, pid_t child,
           const std::function<bool()>& interrupt) {
  char buffer[1 << 16];  // what a pipe holds by default
  bool passed_on = false;
  for (;;) {
    const auto left = deadline - Clock::now();
    if (left <= Clock::duration::zero()) return false;
    if (interrupt && !passed_on && interrupt()) {
      ::kill(child, SIGINT);
      passed_on = true;
    }
    const int wait_ms = interrupt && !passed_on ? std::min(poll_ms(left), 100) : poll_ms(left);
    pollfd p{fd, POLLIN, 0};
    int ready = ::poll(&p, 1, wait_ms);
    if (ready < 0) {
      if (errno == EINTR) continue;
      throw_errno("poll");
    }
    if (ready == 0) continue;
    ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      throw_errno("read");
    }
    if (n == 0) return true;
    out.append(buffer, static_cast<std::size_t>(n));
  }
}

// The child's whole life: it must never return into the caller's code (that
// would run the parent's program twice), so every path ends in _exit.
[[noreturn]] void run_child(const std::function<std::string()>& fn, int out_fd,
                            pid_t parent) noexcept {
  int code = 0;
  try {
#ifdef __linux__
    // A parent killed outright (SIGKILL) cannot reap us: die with it rather
    // than run on, maybe forever. The parent may have died before prctl.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(kParentGone);
#else
    (void)parent;
#endif
    rlimit no_core{0, 0};
    ::setrlimit(RLIMIT_CORE, &no_core);
    char kind = kResult;
    std::string payload;
    try {
      payload = fn();
    } catch (const std::exception& e) {
      kind = kException;
      payload = e.what();
    } catch (...) {
      kind = kException;
      payload = "an exception of unknown type";
    }
    char header[kHeader];
    header[0] = kind;
    const std::uint64_t size = payload.size();
    std::memcpy(header + 1, &size, sizeof size);
    code = write_all(out_fd, header, kHeader) && write_all(out_fd, payload.data(), payload.size())
               ? 0
               : kChildWriteFailed;
  } catch (...) {
    code = kChildFailed;
  }
  ::_exit(code);
}

// The result the child sent, or nothing when it is not whole.
std::optional<IsolatedOutcome> parse_frame(std::string& frame) {
  if (frame.size() < kHeader || (frame[0] != kResult && frame[0] != kException))
    return std::nullopt;
  std::uint64_t size = 0;
  std::memcpy(&size, frame.data() + 1, sizeof size);
  if (size != frame.size() - kHeader) return std::nullopt;
  IsolatedOutcome outcome;
  outcome.kind = frame[0] == kResult ? IsolatedOutcome::Kind::kOk : IsolatedOutcome::Kind::kThrew;
  frame.erase(0, kHeader);
  outcome.payload = std::move(frame);
  return outcome;
}

}  // namespace

IsolatedOutcome run_isolated(const std::function<std::string()>& fn,
                             std::chrono::milliseconds timeout,
                             const std::function<void()>& meanwhile,
                             const std::function<bool()>& interrupt) {
  int fds[2];
  // Close-on-exec: a program the parent starts later must not hold the
  // write end open (no EOF would come).
  if (::pipe2(fds, O_CLOEXEC) != 0) throw_errno("pipe2");
  UniqueFd read_end(fds[0]);
  UniqueFd write_end(fds[1]);
  const pid_t parent = ::getpid();
  const auto deadline = deadline_after(timeout);
  const pid_t pid = ::fork();
  if (pid < 0) throw_errno("fork");
  if (pid == 0) {
    read_end.reset();
    run_child(fn, write_end.get(), parent);
  }
  ChildProcess child(pid);
  write_end.reset();           // ours closed, EOF comes when the child's closes
  if (meanwhile) meanwhile();  // the child blocks on a full pipe until we read

  std::string frame;
  IsolatedOutcome outcome;
  if (!drain(read_end.get(), deadline, frame, pid, interrupt)) {
    child.kill_and_wait();
    outcome.kind = IsolatedOutcome::Kind::kTimedOut;
    return outcome;
  }
  const ExitInfo exit = child.wait_until(deadline);
  if (exit.timed_out) {
    outcome.kind = IsolatedOutcome::Kind::kTimedOut;
    return outcome;
  }
  if (exit.known && WIFSIGNALED(exit.status)) {
    outcome.kind = IsolatedOutcome::Kind::kSignaled;
    outcome.signal = WTERMSIG(exit.status);
    return outcome;
  }
  const bool clean_exit = !exit.known || (WIFEXITED(exit.status) && WEXITSTATUS(exit.status) == 0);
  if (clean_exit) {
    if (auto parsed = parse_frame(frame)) return std::move(*parsed);
  }
  outcome.kind = IsolatedOutcome::Kind::kExited;
  outcome.exit_status = exit.known && WIFEXITED(exit.status) ? WEXITSTATUS(exit.status) : -1;
  return outcome;
}

bool run_in_process_requested(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && std::string_view(v) == "1";
}

std::string signal_name(int signal) {
  static constexpr std::pair<int, const char*> kNames[] = {
      {SIGHUP, "SIGHUP"},   {SIGINT, "SIGINT"},   {SIGQUIT, "SIGQUIT"}, {SIGILL, "SIGILL"},
      {SIGTRAP, "SIGTRAP"}, {SIGABRT, "SIGABRT"}, {SIGBUS, "SIGBUS"},   {SIGFPE, "SIGFPE"},
      {SIGKILL, "SIGKILL"}, {SIGUSR1, "SIGUSR1"}, {SIGSEGV, "SIGSEGV"}, {SIGUSR2, "SIGUSR2"},
      {SIGPIPE, "SIGPIPE"}, {SIGALRM, "SIGALRM"}, {SIGTERM, "SIGTERM"}, {SIGXCPU, "SIGXCPU"},
      {SIGXFSZ, "SIGXFSZ"}, {SIGSYS, "SIGSYS"},
  };
  for (const auto& [number, name] : kNames)
    if (number == signal) return name;
  return "signal " + std::to_string(signal);
}

}  // namespace memplan::util
