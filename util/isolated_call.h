#pragma once
// Runs a function in a forked child process, so that a crash or a hang inside
// it (third-party code we cannot fix, such as libonnx's shape inference)
// becomes an outcome the caller reports instead of taking memplan down.
//
// Assumption: the calling process is single-threaded when it calls
// run_isolated. The child is a copy of the caller with only the calling
// thread; a mutex another thread held at fork() stays locked forever in the
// child, so a multi-threaded caller could deadlock it (the timeout would then
// end it). memplan loads models (shape inference) and runs Cbc (the ILP)
// while no other thread of its own runs: the heuristic's and the layout's
// threads are joined before they return, and `plan` writes its outputs on
// threads only after planning.
#include <chrono>
#include <functional>
#include <string>

namespace memplan::util {

struct IsolatedOutcome {
  enum class Kind {
    kOk,        // `payload` is what the function returned
    kThrew,     // the function threw; `payload` is the exception's what()
    kSignaled,  // a signal (`signal`) ended the child: a crash, or a kill from outside
    kExited,    // the child exited (`exit_status`) without sending a whole result
    kTimedOut,  // the child ran past the timeout and was killed with SIGKILL
  };
  Kind kind = Kind::kOk;
  std::string payload;
  int signal = 0;
  int exit_status = 0;
};

// Runs `fn` in a child process and returns how that went. The result travels
// back over a pipe that the parent drains while the child writes, so it may
// be of any size. The child never returns into the caller's code: it ends
// with _exit (no destructors, atexit handlers or flushing of stdio buffers
// copied from the parent; output `fn` leaves in stdio buffers is lost), and
// it dumps no core (a crash is an outcome here, and a core of a copy of a
// large process is slow to write). The child is always reaped, whatever the
// outcome; it is killed if the parent dies first. `timeout` must be
// positive; it counts from the fork. Throws std::system_error when no child
// can be started (pipe or fork failed). `meanwhile`, when given, runs in
// the parent once the child is started, before its result is read; an
// exception from it kills the child and propagates. `interrupt`, when given,
// is asked at least every 100 ms while the child runs; the first time it
// says yes the child gets SIGINT (and may still send its result): a SIGINT
// sent to this process alone reaches the work it handed to the child.
IsolatedOutcome run_isolated(const std::function<std::string()>& fn,
                             std::chrono::milliseconds timeout,
                             const std::function<void()>& meanwhile = {},
                             const std::function<bool()>& interrupt = {});

// Whether the environment variable `name` is "1": the callers' switch to
// run in-process instead (MEMPLAN_INPROCESS_SHAPES, MEMPLAN_INPROCESS_CBC),
// for a debugger or a fuzzer that must see the crash.
bool run_in_process_requested(const char* name);

// "SIGSEGV" for SIGSEGV and the other common signals; "signal N" otherwise.
std::string signal_name(int signal);

}  // namespace memplan::util
