#pragma once
// Runs the memplan CLI the way a user does, capturing exit code and output.
#include <string>

namespace memplan::test {

struct CommandResult {
  int exit_code = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};

// Runs `MEMPLAN_BINARY <args>` through /bin/sh; `args` is shell text.
CommandResult run_memplan(const std::string& args);

}  // namespace memplan::test
