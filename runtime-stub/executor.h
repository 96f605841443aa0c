#pragma once
// Executes a plan's schedule on a backend: builds the stream program from
// the plan and its memory layout (PLAN_FORMAT.md's timing rules become
// waits), runs it, and reports measured against predicted, with every
// integrity error found on the way.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "planner/memory_layout.h"
#include "planner/plan.h"
#include "runtime-stub/backend.h"

namespace memplan::runtime {

// Where one check happened, to name it in a report.
struct CheckSite {
  std::int64_t step = 0;  // schedule index; the schedule's size for the final check
  ir::TensorId tensor = ir::kNoTensor;
  bool host = false;  // the tensor's host copy (Program::final_host_reads)
};

struct BuiltProgram {
  Program program;
  std::vector<CheckSite> sites;  // by check index
  // Integrity errors visible without running: a step reads a tensor that
  // was never made resident, a graph output is not resident at the end, an
  // initial_host tensor is.
  std::vector<std::string> static_errors;
};

// The timing rules as waits: compute/recompute wait for the step that last
// made each input resident; swap_out T for the step that last made T
// resident; free T for every swap_out T before it; swap_in for the last free
// before it. One wait more than the rules, which a valid schedule already
// implies (T's readers waited): free T also waits for the swap_in that made
// T resident, so its bytes are never poisoned under a copy in flight. And
// one the rules lack: swap_out T waits for the last step that wrote T in
// place (ir/in_place_writes.h), or it could copy the values from before.
//
// A tensor written in place holds a new pattern after each write
// (written_seed), so a stale host copy swapped back in is caught. The plan's
// initial_host tensors start in the host pool (Program::initial_host) and
// their copies there are checked at the end (final_host_reads).
//
// `layout` must describe `plan` (planner::memory_layout_problem is empty);
// the schedule itself need not be valid: reads of tensors that are not
// resident go to wherever the tensor last was, so the run counts them.
BuiltProgram build_program(const ir::Graph& graph, const planner::Plan& plan,
                           const planner::MemoryLayout& layout, double time_scale);

struct RunOptions {
  std::optional<double> time_scale;  // unset: the backend's default
  int iterations = 1;
  bool poison_frees = true;  // Program::poison_frees
};

struct IntegrityError {
  std::int64_t step = -1;  // schedule index; the schedule's size: the end
  std::string tensor;
  std::string what;  // "wrong bytes", "freed memory", or a static error
};

struct RunReport {
  std::string backend;
  double time_scale = 1;
  bool poison_frees = true;
  // Measured: what the backend allocated, and the highest arena byte any
  // iteration touched (Measurement::touched_bytes).
  MemoryFigures memory;
  std::optional<std::uint64_t> touched_bytes;
  std::uint64_t host_pool_bytes = 0;
  // Predicted (the plan's own figures).
  std::uint64_t budget_bytes = 0;        // plan.budget_bytes
  std::uint64_t layout_arena_bytes = 0;  // the layout's arena_bytes
  std::uint64_t planned_peak_bytes = 0;  // plan.predicted.peak_bytes
  double predicted_seconds = 0;          // plan.predicted.iteration_seconds x time_scale
  std::vector<double> measured_seconds;  // one per iteration
  double measured_median = 0;
  // Of the median iteration: per stream, time its ops ran past their scaled
  // planned durations (Measurement::overrun_seconds); unset where not measured.
  std::optional<std::array<double, kStreamCount>> overrun_seconds;
  std::uint64_t checks = 0;  // pattern checks per iteration
  std::uint64_t wrong_bytes = 0;
  std::uint64_t freed_reads = 0;
  std::uint64_t static_errors = 0;
  std::vector<IntegrityError> first_errors;  // up to kMaxListed, in check order

  static constexpr std::size_t kMaxListed = 20;
  std::uint64_t integrity_errors() const { return wrong_bytes + freed_reads + static_errors; }
  // The device bytes held against the budget, the best figure the backend
  // measured: the driver's for the arena on a GPU, else the touched
  // high-water mark, else the allocation.
  std::uint64_t measured_bytes() const;
  const char* measured_bytes_source() const;
  bool over_budget() const { return measured_bytes() > budget_bytes; }
  double fragmentation() const;  // measured bytes / planned peak
};

// Builds, prepares and runs `options.iterations` iterations. An error found
// in any iteration counts once per check. Throws InvalidPlanError when
// `layout` does not describe `plan` (planner::memory_layout_problem).
RunReport run_plan(const ir::Graph& graph, const planner::Plan& plan,
                   const planner::MemoryLayout& layout, Backend& backend,
                   const RunOptions& options = {});

}  // namespace memplan::runtime
