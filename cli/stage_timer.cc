#include "cli/stage_timer.h"

#include <cstdio>

namespace memplan::cli {

void StageTimer::add(std::string name, double seconds, std::string note) {
  stages_.push_back({std::move(name), seconds, std::move(note)});
}

double StageTimer::seconds_since_start() const {
  return std::chrono::duration<double>(Clock::now() - start_).count();
}

void StageTimer::print(std::ostream& out) const {
  auto line = [&](const std::string& name, double seconds, const std::string& note) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "  %-26s %11.6f s", name.c_str(), seconds);
    out << buf << (note.empty() ? "" : "  ") << note << "\n";
  };
  out << "timings (wall clock):\n";
  for (const Stage& s : stages_) line(s.name, s.seconds, s.note);
  line("total", seconds_since_start(), "the whole command, from its start");
}

}  // namespace memplan::cli
