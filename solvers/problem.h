#pragma once
// The knapsack the solvers see (docs/model.md): candidates with sizes,
// eviction windows and time costs, and the baseline memory per step. No
// ONNX, no graph: a solver needs nothing else.
#include <cstdint>
#include <string>
#include <vector>

namespace memplan::solvers {

// Steps [begin, end] inclusive; empty when begin > end.
struct Interval {
  std::int64_t begin = 0;
  std::int64_t end = -1;
  bool empty() const { return begin > end; }
  bool contains(std::int64_t s) const { return begin <= s && s <= end; }
  bool operator==(const Interval&) const = default;
};

struct Candidate {
  std::uint32_t tensor = 0;  // TensorId of the graph the problem came from
  std::string name;          // for reports
  std::uint64_t bytes = 0;
  std::int64_t made = 0;                // step that makes it
  std::int64_t last_forward_use = 0;    // its last forward reader (or `made`)
  std::int64_t first_backward_use = 0;  // its first backward reader
  // Steps during which the tensor is off the device under each choice.
  Interval swap_gap;
  Interval recompute_gap;
  // Transfer durations (bytes / bandwidth) and what of them compute cannot hide.
  double swap_out_seconds = 0;
  double swap_in_seconds = 0;
  double swap_exposed_seconds = 0;
  // The producer's time plus the chain of forward tensors it needs again.
  double recompute_seconds = 0;
  bool can_swap = false;
  bool can_recompute = false;
  // Training state rather than an activation: a graph input or initializer
  // (a parameter, an accumulation buffer, optimizer state), resident from
  // the start (`made` is -1). Only a swap: out from the start, freed after
  // its last forward reader (at once without one), back for its first
  // backward reader and resident from then on, as at the start (docs/model.md
  // §Training state). The paper baselines leave these alone.
  bool state = false;

  bool operator==(const Candidate&) const = default;
};

// A recompute reads its chain's inputs where it runs (docs/model.md §Chain
// holds). When candidate `reader` is recomputed and candidate `input`, one
// of those inputs, is evicted, the scheduler brings `input` back for that
// recompute and holds it until its own reader: over `held`, the input's
// `bytes` are on the device even inside its gap. Holds of one tensor
// (`source`) share their end and bytes and count once: from the earliest
// recomputed reader's start. Problem::holds is sorted by source, then start.
struct ChainHold {
  std::size_t reader = 0;
  std::size_t input = 0;
  Interval held;
  std::uint64_t bytes = 0;
  std::size_t source = 0;  // the held tensor (a candidate of the fine problem)

  bool operator==(const ChainHold&) const = default;
};

// A forward node that the recompute chains of several candidates run (an
// intermediate the baseline frees before their readers, docs/model.md
// §Shared chain steps). The scheduler remakes it once, at the first reader,
// and keeps it for the rest, so while each reader's recompute_seconds
// counts it, a plan that recomputes n of `readers` pays it once, not n
// times. `readers` may repeat a candidate (a coarse group of several).
struct SharedChainStep {
  double seconds = 0;
  std::vector<std::size_t> readers;

  bool operator==(const SharedChainStep&) const = default;
};

// Training state kept on the host between iterations (ir::Tensor::
// starts_on_host): copied in before its first reader whatever the choice,
// and out after its last in-place writer (none when nothing writes it).
struct HostCopy {
  std::uint64_t bytes = 0;
  std::int64_t load = 0;  // the step from which the model has it resident
  std::int64_t first_read = 0;
  std::int64_t last_read = 0;
  std::int64_t written = -1;  // its last in-place writer; -1: no copy out
  double in_seconds = 0;
  double out_seconds = 0;

  bool operator==(const HostCopy&) const = default;
};

struct Problem {
  std::vector<Candidate> candidates;
  std::vector<ChainHold> holds;
  std::vector<SharedChainStep> shared_steps;
  std::vector<std::uint64_t> step_bytes;  // baseline device memory during each step
  std::vector<double> step_seconds;       // compute time of each step
  std::uint64_t budget_bytes = 0;
  double forward_seconds = 0;   // compute time the d2h link can hide under
  double backward_seconds = 0;  // compute time the h2d link can hide under
  double baseline_seconds = 0;  // the baseline iteration time
  // How a hold whose input is recomputed is priced: false, its bytes over
  // the held span (the scheduler keeps the rebuilt input); true, the
  // input's recompute_seconds once more (the scheduler frees it after the
  // reader's recompute and rebuilds it at its own reader, which it does
  // where memory is short). Holds of swapped inputs always cost bytes.
  bool holds_cost_time = false;
  // What the copies of training state kept on the host between iterations
  // (ir::Tensor::starts_on_host) stall compute: each in for its first
  // reader, each written one out after its last writer, one FIFO per
  // direction, replayed alone. The same for every choice, so no solver's
  // decisions depend on it; the objective includes it.
  double host_copy_seconds = 0;
  std::vector<HostCopy> host_copies;  // by first reader

  std::uint64_t baseline_peak() const;
  // Two problems alike in every field get the same plan from any solver:
  // the planner skips solving the second.
  bool operator==(const Problem&) const = default;
};

}  // namespace memplan::solvers
