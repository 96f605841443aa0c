#pragma once
// The backend that runs everywhere: the arena and the "pinned" pool are host
// memory, each stream is a thread, copies are memcpy, a compute is a check of
// its inputs' patterns, a write of its outputs' and a timed busy loop until
// its (scaled) time has passed. It proves the plan's memory and ordering on
// machines without a GPU; its timing is the plan's, slowed by the time scale.
#include <cstddef>
#include <cstdint>
#include <memory>

#include "runtime-stub/backend.h"
#include "runtime-stub/pattern.h"

namespace memplan::runtime {

// Host bytes per second for the three kinds of work the streams do.
struct HostSpeed {
  double fill_bytes_per_s = 0;   // writing a pattern (and poisoning)
  double check_bytes_per_s = 0;  // comparing a pattern
  double copy_bytes_per_s = 0;   // memcpy
  double op_seconds = 0;         // per operation: waking a thread, bookkeeping
};

// Measures this machine once (about 0.1 s).
HostSpeed measure_host_speed();

// The smallest time scale at which the host's own work (pattern checks and
// writes, poisoning, memcpy at `speed`) adds at most `tolerance` of the
// scaled compute time to any stream, so measured time is the plan's.
double host_time_scale(const Program& program, const HostSpeed& speed, double tolerance = 0.03);

void write_pattern(std::byte* base, const TensorRange& range);
CheckOutcome check_pattern(const std::byte* base, const TensorRange& range);

class HostBackend final : public Backend {
 public:
  HostBackend();
  ~HostBackend() override;
  HostBackend(const HostBackend&) = delete;
  HostBackend& operator=(const HostBackend&) = delete;

  std::string name() const override { return "host"; }
  double default_time_scale(const Program& program) override;
  void prepare(const Program& program) override;
  Measurement run(const Program& program) override;
  MemoryFigures memory() const override { return {allocated_bytes_, {}, {}}; }

 private:
  struct FreeDeleter {
    void operator()(std::byte* p) const;
  };
  using Memory = std::unique_ptr<std::byte, FreeDeleter>;
  static Memory allocate(std::uint64_t bytes, std::uint64_t* allocated = nullptr);

  Memory arena_;
  Memory pool_;
  std::uint64_t arena_bytes_ = 0;
  std::uint64_t allocated_bytes_ = 0;  // the arena's allocation, page-rounded
  std::uint64_t pool_bytes_ = 0;
};

}  // namespace memplan::runtime
