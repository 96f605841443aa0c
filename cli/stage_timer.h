#pragma once
// Wall time per stage of one command, for --timings: each stage as it ran,
// printed to stderr at the end (also when the command fails), one line each:
//   "  NAME  SECONDS s  what it covers". Scripts read the lines; the figures
// vary from run to run, so tests check only the names.
#include <chrono>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace memplan::cli {

class StageTimer {
 public:
  struct Stage {
    std::string name;
    double seconds = 0;
    std::string note;
  };

  // Runs f and records its wall time under `name` (also when it throws);
  // returns what f returns.
  template <class F>
  decltype(auto) time(std::string name, std::string note, F&& f) {
    Scope scope(*this, std::move(name), std::move(note));
    return std::forward<F>(f)();
  }
  // A figure measured elsewhere (e.g. the solver's own time).
  void add(std::string name, double seconds, std::string note = {});
  const std::vector<Stage>& stages() const { return stages_; }
  double seconds_since_start() const;
  // The stages in the order they ran, then "total" (since construction).
  void print(std::ostream& out) const;

 private:
  using Clock = std::chrono::steady_clock;
  class Scope {
   public:
    Scope(StageTimer& t, std::string name, std::string note)
        : t_(t), name_(std::move(name)), note_(std::move(note)), start_(Clock::now()) {}
    ~Scope() {
      t_.add(std::move(name_), std::chrono::duration<double>(Clock::now() - start_).count(),
             std::move(note_));
    }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    StageTimer& t_;
    std::string name_, note_;
    Clock::time_point start_;
  };

  Clock::time_point start_ = Clock::now();
  std::vector<Stage> stages_;
};

// Runs f(timer) with a fresh timer; when `print`, prints the stages on
// `out` after it, also when it throws.
template <class F>
void with_timings(bool print, std::ostream& out, F&& f) {
  StageTimer timer;
  try {
    std::forward<F>(f)(timer);
  } catch (...) {
    if (print) timer.print(out);
    throw;
  }
  if (print) timer.print(out);
}

}  // namespace memplan::cli
