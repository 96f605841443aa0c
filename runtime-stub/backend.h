#pragma once
// What a backend executes: a plan's schedule turned into operations on three
// in-order streams (compute, device->host, host->device) with cross-stream
// waits, over one device arena and one pinned host pool. The executor
// (executor.h) builds the Program from a plan and its memory layout; a
// backend only runs it, so the host and CUDA backends cannot disagree on
// what the plan means.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "planner/simulator.h"  // planner::Stream

namespace memplan::runtime {

using planner::Stream;
inline constexpr std::size_t kStreamCount = 3;

// One tensor's bytes in the device arena and the pattern they should hold.
struct TensorRange {
  std::uint64_t offset = 0;  // in the arena
  std::uint64_t bytes = 0;
  std::uint64_t seed = 0;   // pattern_seed(name)
  std::uint32_t check = 0;  // for reads: index into the outcome array
};

// "Until operation `index` of `stream` has ended": a CUDA event recorded
// after that operation, waited on by another stream.
struct Wait {
  Stream stream = Stream::kCompute;
  std::uint32_t index = 0;
  friend bool operator==(const Wait&, const Wait&) = default;
};

enum class OpKind : std::uint8_t {
  kCompute,  // compute or recompute: check `reads`, write `writes`, last `seconds`
  kFree,     // poison `writes` (the freed range) if poison_frees; no planned time
  kCopyOut,  // swap_out: arena `device` -> host pool at `host_offset`
  kCopyIn,   // swap_in: host pool at `host_offset` -> arena `device`
};

struct Op {
  OpKind kind = OpKind::kCompute;
  std::uint32_t step = 0;   // index into the plan's schedule
  double seconds = 0;       // planned duration at time scale 1
  std::vector<Wait> waits;  // on other streams only: a stream is in order
  std::vector<TensorRange> reads;
  std::vector<TensorRange> writes;
  TensorRange device;             // copies
  std::uint64_t host_offset = 0;  // copies
};

struct Program {
  std::array<std::vector<Op>, kStreamCount> streams;  // by Stream, each in issue order
  std::uint64_t arena_bytes = 0;
  std::uint64_t host_pool_bytes = 0;
  // Written before the timed iteration: what is resident at the start.
  std::vector<TensorRange> initial;
  // Written into the host pool before it (offsets are the pool's): the
  // plan's initial_host tensors, which start on the host only.
  std::vector<TensorRange> initial_host;
  // Checked after it: every tensor still resident, graph outputs included.
  std::vector<TensorRange> final_reads;
  // Checked in the host pool after it: each initial_host tensor's copy holds
  // its values after its last in-place write, ready for the next iteration.
  std::vector<TensorRange> final_host_reads;
  std::uint32_t check_count = 0;  // reads of all ops, final_reads and final_host_reads
  double time_scale = 1;          // planned seconds are multiplied by it
  // Frees write the poison, so a later read of freed bytes is caught. Off
  // for timing runs: PLAN_FORMAT gives a free no time, and a memset on the
  // compute stream is not free on a device.
  bool poison_frees = true;
  // Ops on each stream that another stream waits for (CUDA records an event
  // after exactly these).
  std::array<std::vector<bool>, kStreamCount> awaited;
};

// One timed iteration: wall time and, per check, what it found.
struct Measurement {
  double seconds = 0;
  std::vector<std::uint8_t> outcomes;  // CheckOutcome by check index
  // Per stream, how long its ops ran past their scaled planned durations
  // (host work that did not fit, late wake-ups); unset where the backend
  // cannot see single ops (CUDA times the whole captured graph).
  std::optional<std::array<double, kStreamCount>> overrun_seconds;
  // One past the highest arena byte this iteration's ops (and the initial
  // writes and final checks) actually wrote or read; unset where not measured.
  std::optional<std::uint64_t> touched_bytes;
};

// Device memory as the backend found it, not as the plan states it.
struct MemoryFigures {
  // The arena's allocation as made, the allocator's rounding included.
  std::uint64_t allocated_bytes = 0;
  // Free device memory that the arena's allocation took, and that all of the
  // backend's device allocations took, by the driver (cudaMemGetInfo before
  // and after); unset off a GPU. Other processes on the device add noise.
  std::optional<std::uint64_t> device_arena_bytes;
  std::optional<std::uint64_t> device_total_bytes;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;
  // A time scale at which this backend can keep the plan's timing; the host
  // backend measures itself, a GPU runs at 1.
  virtual double default_time_scale(const Program& program) = 0;
  // Untimed: the arena and the host pool, descriptors, calibration.
  virtual void prepare(const Program& program) = 0;
  // One iteration: both memories poisoned and `initial` and `initial_host`
  // written (untimed), the streams run (timed), `final_reads` and
  // `final_host_reads` checked (untimed).
  virtual Measurement run(const Program& program) = 0;
  // What prepare() allocated, measured where the backend can.
  virtual MemoryFigures memory() const = 0;
};

}  // namespace memplan::runtime
