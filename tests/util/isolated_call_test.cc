// util::run_isolated: a function run in a forked child comes back as a result,
// a signal, an exit, an exception or a timeout, and no child is left behind.
// No assertion here depends on how long anything takes.
#include "util/isolated_call.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>

#include "support/model_builder.h"

namespace memplan::util {
namespace {

using namespace std::chrono_literals;
using Kind = IsolatedOutcome::Kind;

// Long enough that no test below reaches it unless it means to.
constexpr auto kGenerous = std::chrono::milliseconds(std::chrono::minutes(5));

// True when this process has no child left, reaped or not: a zombie would
// make waitpid return its pid.
bool no_children_left() {
  int status = 0;
  return ::waitpid(-1, &status, WNOHANG) == -1 && errno == ECHILD;
}

[[noreturn]] void sleep_forever() {
  for (;;) ::pause();
}

TEST(IsolatedCall, ReturnsTheFunctionsResult) {
  IsolatedOutcome r = run_isolated([] { return std::string("hello from the child"); }, kGenerous);
  ASSERT_EQ(r.kind, Kind::kOk);
  EXPECT_EQ(r.payload, "hello from the child");
  EXPECT_TRUE(no_children_left());
}

TEST(IsolatedCall, AnEmptyResultIsAResult) {
  IsolatedOutcome r = run_isolated([] { return std::string(); }, kGenerous);
  EXPECT_EQ(r.kind, Kind::kOk);
  EXPECT_EQ(r.payload, "");
}

// Far more than a pipe holds (64 KiB): the parent must read while the child
// writes, or both wait forever.
TEST(IsolatedCall, ResultsLargerThanThePipeComeBackWhole) {
  auto make = [] {
    std::string s(3 * 1024 * 1024 + 17, '\0');
    for (std::size_t i = 0; i < s.size(); ++i)
      s[i] = static_cast<char>((i * 131 + i / 4096) & 0xff);
    return s;
  };
  IsolatedOutcome r = run_isolated(make, kGenerous);
  ASSERT_EQ(r.kind, Kind::kOk);
  EXPECT_EQ(r.payload.size(), make().size());
  EXPECT_TRUE(r.payload == make());
  EXPECT_TRUE(no_children_left());
}

TEST(IsolatedCall, ASegfaultIsReportedAsTheSignal) {
  IsolatedOutcome r = run_isolated(
      []() -> std::string {
        // A sanitizer's handler would report the fault and exit with a
        // status; the default action is what an unprotected crash does.
        std::signal(SIGSEGV, SIG_DFL);
        std::raise(SIGSEGV);
        return "not reached";
      },
      kGenerous);
  ASSERT_EQ(r.kind, Kind::kSignaled);
  EXPECT_EQ(r.signal, SIGSEGV);
  EXPECT_EQ(signal_name(r.signal), "SIGSEGV");
  EXPECT_TRUE(no_children_left());
}

TEST(IsolatedCall, AnAbortIsReportedAsTheSignal) {
  IsolatedOutcome r = run_isolated([]() -> std::string { std::abort(); }, kGenerous);
  ASSERT_EQ(r.kind, Kind::kSignaled);
  EXPECT_EQ(r.signal, SIGABRT);
  EXPECT_EQ(signal_name(r.signal), "SIGABRT");
}

TEST(IsolatedCall, AChildPastTheTimeoutIsKilledAndReaped) {
  IsolatedOutcome r = run_isolated([]() -> std::string { sleep_forever(); }, 100ms);
  EXPECT_EQ(r.kind, Kind::kTimedOut);
  EXPECT_TRUE(no_children_left());
}

// A SIGINT meant for the caller reaches the child through `interrupt`:
// the handler the child inherits (as memplan's CLI's is) turns it into its
// answer.
volatile std::sig_atomic_t g_child_interrupted = 0;

TEST(IsolatedCall, AYesFromInterruptSendsTheChildSigint) {
  bool asked = false;
  struct sigaction on_sigint {
  }, callers{};
  on_sigint.sa_handler = [](int) { g_child_interrupted = 1; };
  sigemptyset(&on_sigint.sa_mask);
  ASSERT_EQ(::sigaction(SIGINT, &on_sigint, &callers), 0);
  IsolatedOutcome r = run_isolated(
      []() -> std::string {
        while (g_child_interrupted == 0) std::this_thread::sleep_for(1ms);
        return "stopped by SIGINT";
      },
      kGenerous, {},
      [&asked] {
        asked = true;
        return true;
      });
  ::sigaction(SIGINT, &callers, nullptr);
  EXPECT_TRUE(asked);
  EXPECT_EQ(r.kind, Kind::kOk);
  EXPECT_EQ(r.payload, "stopped by SIGINT");
  EXPECT_TRUE(no_children_left());
}

// EOF on the pipe but the child runs on: the deadline still holds.
TEST(IsolatedCall, AChildThatClosesThePipeAndRunsOnStillTimesOut) {
  IsolatedOutcome r = run_isolated(
      []() -> std::string {
        for (int fd = 3; fd < 4096; ++fd) ::close(fd);
        sleep_forever();
      },
      100ms);
  EXPECT_EQ(r.kind, Kind::kTimedOut);
  EXPECT_TRUE(no_children_left());
}

TEST(IsolatedCall, AnExceptionComesBackWithItsMessage) {
  IsolatedOutcome r =
      run_isolated([]() -> std::string { throw std::runtime_error("no shapes today"); }, kGenerous);
  ASSERT_EQ(r.kind, Kind::kThrew);
  EXPECT_EQ(r.payload, "no shapes today");
  EXPECT_TRUE(no_children_left());
}

TEST(IsolatedCall, AnExceptionOfAnyTypeIsReported) {
  IsolatedOutcome r = run_isolated([]() -> std::string { throw 42; }, kGenerous);
  ASSERT_EQ(r.kind, Kind::kThrew);
  EXPECT_FALSE(r.payload.empty());
}

TEST(IsolatedCall, AnExitWithoutAResultIsReportedWithItsStatus) {
  IsolatedOutcome r = run_isolated([]() -> std::string { ::_exit(7); }, kGenerous);
  ASSERT_EQ(r.kind, Kind::kExited);
  EXPECT_EQ(r.exit_status, 7);
  EXPECT_TRUE(no_children_left());
}

// The child works on a copy of the parent's memory.
TEST(IsolatedCall, TheChildsChangesStayInTheChild) {
  int value = 1;
  IsolatedOutcome r = run_isolated(
      [&] {
        value = 2;
        return std::to_string(value);
      },
      kGenerous);
  ASSERT_EQ(r.kind, Kind::kOk);
  EXPECT_EQ(r.payload, "2");
  EXPECT_EQ(value, 1);
}

// The child ends with _exit: what the parent had buffered in stdio is not
// written a second time by the child.
TEST(IsolatedCall, TheParentsStdioBuffersAreNotFlushedByTheChild) {
  std::string path = test::temp_path("isolated_stdio.txt");
  std::FILE* f = std::fopen(path.c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fputs("written once", f);  // still in the buffer at the fork
  IsolatedOutcome r = run_isolated([] { return std::string("done"); }, kGenerous);
  ASSERT_EQ(std::fclose(f), 0);
  EXPECT_EQ(r.kind, Kind::kOk);
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), "written once");
  std::remove(path.c_str());
}

// A signal handler installed without SA_RESTART makes poll, read and waitpid
// fail with EINTR again and again while the parent waits; the result must
// still come back whole.
TEST(IsolatedCall, SignalsInterruptingTheParentLoseNothing) {
  struct sigaction action {};
  action.sa_handler = [](int) {};
  sigemptyset(&action.sa_mask);
  action.sa_flags = 0;
  struct sigaction previous {};
  ASSERT_EQ(::sigaction(SIGALRM, &action, &previous), 0);
  itimerval every_ms{{0, 1000}, {0, 1000}};
  ASSERT_EQ(::setitimer(ITIMER_REAL, &every_ms, nullptr), 0);
  IsolatedOutcome r = run_isolated(
      [] {
        std::this_thread::sleep_for(50ms);  // interval timers are not inherited
        return std::string(2 * 1024 * 1024, 'x');
      },
      kGenerous);
  itimerval off{};
  ::setitimer(ITIMER_REAL, &off, nullptr);
  ::sigaction(SIGALRM, &previous, nullptr);
  ASSERT_EQ(r.kind, Kind::kOk);
  EXPECT_EQ(r.payload, std::string(2 * 1024 * 1024, 'x'));
  EXPECT_TRUE(no_children_left());
}

TEST(IsolatedCall, SignalNames) {
  EXPECT_EQ(signal_name(SIGBUS), "SIGBUS");
  EXPECT_EQ(signal_name(SIGKILL), "SIGKILL");
  EXPECT_EQ(signal_name(SIGFPE), "SIGFPE");
  EXPECT_EQ(signal_name(1000), "signal 1000");
}

}  // namespace
}  // namespace memplan::util
