#pragma once
// The objective and the memory constraint of docs/model.md, evaluated for
// one assignment: the yardstick every solver and test shares.
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "solvers/decision.h"
#include "solvers/problem.h"

namespace memplan::solvers {

struct ModelEval {
  std::uint64_t peak_bytes = 0;  // max over steps of baseline minus freed
  std::int64_t peak_step = -1;
  bool fits = false;            // peak_bytes <= budget
  double overhead_seconds = 0;  // the objective
  double link_out_excess = 0;   // d2h transfers beyond forward compute
  double link_in_excess = 0;    // h2d transfers beyond backward compute
};

// `choice` has one entry per candidate. O(candidates + steps).
ModelEval evaluate(const Problem& problem, std::span<const Decision> choice);

// What the recomputes of `choice` do not pay twice: each shared chain step
// (problem.h) once per recomputed reader beyond the first.
double shared_step_saving(const Problem& problem, std::span<const Decision> choice);

// Bytes freed at each step by `choice`.
std::vector<std::uint64_t> freed_per_step(const Problem& problem, std::span<const Decision> choice);

// The steps over which chain hold `h` puts its input back on the device,
// given the reader's and the input's choices: empty unless the reader is
// recomputed and the input evicted.
Interval hold_span(const Problem& problem, const ChainHold& h, Decision reader, Decision input);

// The runs of Problem::holds that hold one tensor: [begin, end) index pairs.
std::vector<std::pair<std::size_t, std::size_t>> hold_groups(const Problem& problem);

// Where the tensor of the hold group [first, end) is back on the device
// under `choice`: from the earliest recomputed reader's start to the end,
// inside the input's gap; empty when no reader is recomputed, the input is
// kept, or the hold costs time instead (hold_seconds).
Interval held_back(const Problem& problem, std::size_t first, std::size_t end,
                   std::span<const Decision> choice);

// What the hold group [first, end) costs in time under `choice`: the
// input's recompute_seconds when holds cost time (problem.h), the input is
// recomputed and a reader is; else 0.
double hold_seconds(const Problem& problem, std::size_t first, std::size_t end,
                    std::span<const Decision> choice);

// Whether the choice for candidate i is allowed by the problem.
bool allowed(const Candidate& c, Decision d);

}  // namespace memplan::solvers
