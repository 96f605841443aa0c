#pragma once
// The PCIe link as the schedule uses it: one first-in first-out queue per
// direction. docs/model.md charges each swap only the copy time its own
// window cannot hide, as if it had the link to itself; in the schedule the
// copies queue, a free waits for its copy and a reader for its reload. This
// replays the chosen copies through the queues and turns each late copy
// into a cut the ILP can add: a lower bound, for every assignment, on how
// long that copy's free (or reader) waits.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "solvers/decision.h"
#include "solvers/model_eval.h"
#include "solvers/problem.h"

namespace memplan::solvers {

// A copy on the compute timeline T (seconds of compute before a step), as
// the scheduler can place it: out from when the tensor exists until the
// first step of its gap whose baseline memory is over budget (the free can
// wait until then), in from after the gap's last such step until its first
// backward reader. A deadline is never before the copy could end on an idle
// link: that much the model's exposed time already charges.
struct LinkCopy {
  std::size_t candidate = 0;
  double release = 0;
  double deadline = 0;
  double seconds = 0;
};

// The steps whose baseline memory is over budget, for the first at or
// after a step and the last at or before one in O(1): link_copies scanned
// each swap gap step by step, O(C S) in all.
class OverBudgetSteps {
 public:
  explicit OverBudgetSteps(const Problem& p);
  // The first over-budget step >= s, or kNone.
  std::int64_t first_from(std::int64_t s) const;
  // The last over-budget step <= s, or -1.
  std::int64_t last_upto(std::int64_t s) const;
  static constexpr std::int64_t kNone = INT64_MAX;

 private:
  std::vector<std::int64_t> next_, prev_;  // per step
};

// Every swappable candidate's two copies, each list in the queue's order
// (release time, then candidate index).
struct LinkCopies {
  std::vector<LinkCopy> to_host, to_device;
};
LinkCopies link_copies(const Problem& problem);

// For whatever assignment: if `last` is swapped, its copy ends no earlier
// than `start` plus the copies of the swapped `members` (those queued from
// `start` up to and including `last`), so it waits at least
// sum(member seconds) - capacity, capacity = its deadline - start.
struct LinkCut {
  bool to_device = false;
  std::size_t last = 0;
  double start = 0;
  std::vector<std::size_t> members;
  std::vector<double> seconds;
  double capacity = 0;

  // The wait this cut charges `choice` (0 when `last` is not swapped).
  double delay(std::span<const Decision> choice) const;
};

// Replays `choice` through both queues; in every busy period with a copy
// later than `tolerance`, the cut for its latest copy.
std::vector<LinkCut> late_copy_cuts(const LinkCopies& copies, std::span<const Decision> choice,
                                    double tolerance);

// Seconds by which the copies of `choice` are late, summed over the busy
// periods of both queues (each period's latest copy).
double queue_delay(const LinkCopies& copies, std::span<const Decision> choice);

// The compute stall the link causes under `choice`, replayed as the
// scheduler drives it (docs/scheduling.md, rules 3 and 8) against the
// model's memory: each direction a FIFO; a free is deferred while its copy
// out runs and the budget has room, else compute waits for the copy; a
// copy in starts at the latest start that keeps it and the copies behind
// it on time, or later where the budget has no room for the tensor, and
// its reader waits for it. Room is shared: a deferred free or an early
// reload takes its bytes from the steps it spans.
double replayed_link_stall(const Problem& problem, std::span<const Decision> choice);

// The model's objective (model_eval.h) with its link terms (each swap's
// exposed time, the link's excess over compute) replaced by the replayed
// stall: the objective every solver reports for the plan it hands out.
// `model` is evaluate(problem, choice), for callers that have it already.
struct ReplayedObjective {
  double seconds = 0;
  double link_stall_seconds = 0;  // replayed_link_stall, its share of `seconds`
};
ReplayedObjective replayed_objective(const Problem& problem, std::span<const Decision> choice,
                                     const ModelEval& model);
double replayed_overhead_seconds(const Problem& problem, std::span<const Decision> choice);

}  // namespace memplan::solvers
