#pragma once
// The objective and the memory constraint of docs/model.md, evaluated for
// one assignment: the yardstick every solver and test shares.
#include <cstdint>
#include <span>
#include <vector>

#include "solvers/decision.h"
#include "solvers/problem.h"

namespace memplan::solvers {

struct ModelEval {
  std::uint64_t peak_bytes = 0;  // max over steps of baseline minus freed
  std::int64_t peak_step = -1;
  bool fits = false;             // peak_bytes <= budget
  double overhead_seconds = 0;   // the objective
  double link_out_excess = 0;    // d2h transfers beyond forward compute
  double link_in_excess = 0;     // h2d transfers beyond backward compute
};

// `choice` has one entry per candidate. O(candidates + steps).
ModelEval evaluate(const Problem& problem, std::span<const Decision> choice);

// Bytes freed at each step by `choice`.
std::vector<std::uint64_t> freed_per_step(const Problem& problem, std::span<const Decision> choice);

// Whether the choice for candidate i is allowed by the problem.
bool allowed(const Candidate& c, Decision d);

}  // namespace memplan::solvers
