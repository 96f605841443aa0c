#pragma once
// A Solution as bytes, for a solve run in a child process
// (util/isolated_call.h) to send back to its parent. Host byte order: the
// reader is the writer's own parent.
#include <optional>
#include <string>
#include <string_view>

#include "solvers/solver.h"

namespace memplan::solvers {

// What an isolated solve sends back: its solution, and whether it stopped
// on SIGINT (the child's flag is its own copy).
struct WireSolution {
  Solution solution;
  bool interrupted = false;
};

// choice, status, objective, bound, solve time, note; prefetch_window and
// own_choice are not sent (the ILP leaves both unset).
std::string encode_solution(const WireSolution& s);

// nullopt when `bytes` is not a whole encode_solution() result.
std::optional<WireSolution> decode_solution(std::string_view bytes);

}  // namespace memplan::solvers
