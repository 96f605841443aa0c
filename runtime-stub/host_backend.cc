#include "runtime-stub/host_backend.h"

#include <sys/prctl.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <new>
#include <thread>
#include <vector>

#include "util/errors.h"

namespace memplan::runtime {
namespace {

using Clock = std::chrono::steady_clock;

std::uint64_t load_word(const std::byte* p) {
  std::uint64_t w;
  std::memcpy(&w, p, sizeof w);
  return w;
}

// Sleeps through most of a wait (so the stream threads share the cores
// without stealing each other's time) and spins the last stretch.
void wait_until(Clock::time_point deadline) {
  const auto spin = std::chrono::microseconds(50);
  for (;;) {
    const auto now = Clock::now();
    if (now >= deadline) return;
    if (deadline - now > spin) std::this_thread::sleep_until(deadline - spin);
  }
}

std::uint64_t range_bytes(const std::vector<TensorRange>& ranges) {
  std::uint64_t sum = 0;
  for (const TensorRange& r : ranges) sum += r.bytes;
  return sum;
}

// Seconds of host work an op needs before its planned time even starts.
double work_seconds(const Op& op, const HostSpeed& speed, bool poison) {
  auto at = [](std::uint64_t bytes, double rate) {
    return rate > 0 ? static_cast<double>(bytes) / rate : 0.0;
  };
  double s = speed.op_seconds;
  switch (op.kind) {
    case OpKind::kCompute:
      s += at(range_bytes(op.reads), speed.check_bytes_per_s);
      s += at(range_bytes(op.writes), speed.fill_bytes_per_s);
      break;
    case OpKind::kFree:
      if (poison) s += at(range_bytes(op.writes), speed.fill_bytes_per_s);
      break;
    case OpKind::kCopyOut:
    case OpKind::kCopyIn:
      s += at(op.device.bytes, speed.copy_bytes_per_s);
      break;
  }
  return s;
}

// One stream's thread. Waits are C++20 atomic waits on the other streams'
// counters of finished ops (the host's CUDA events).
//
// Each op ends at an absolute deadline, as a device would run it: the later
// of the previous op's end on its stream and the ends of the ops it waits
// for, plus its planned (scaled) time or the host's own work for it if that
// took longer. The work counts; the time a thread takes to wake up (the
// OS's jitter, up to milliseconds on a busy machine) does not push the rest
// of the stream back, only the wall-clock end of the last op.
class StreamRunner {
 public:
  using Ends = std::array<std::vector<Clock::time_point>, kStreamCount>;

  StreamRunner(const Program& program, std::size_t stream, std::byte* arena, std::byte* pool,
               std::array<std::atomic<std::uint32_t>, kStreamCount>& done, Ends& ends,
               std::vector<std::uint8_t>& outcomes)
      : program_(program),
        stream_(stream),
        arena_(arena),
        pool_(pool),
        done_(done),
        ends_(ends),
        outcomes_(outcomes) {}

  struct Result {
    Clock::time_point end;      // when the last op actually ended
    double overrun = 0;         // seconds of host work past the ops' planned times
    std::uint64_t touched = 0;  // one past the highest arena byte the ops used
  };

  // Runs every op of the stream from `start`.
  Result run(Clock::time_point start) const {
    const double scale = program_.time_scale;
    Result r{start, 0};
    Clock::time_point previous = start;  // deadline of the previous op
    const auto& ops = program_.streams[stream_];
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const Op& op = ops[i];
      Clock::time_point ready = previous;
      for (const Wait& w : op.waits) {
        await(w);
        ready = std::max(ready, ends_[static_cast<std::size_t>(w.stream)][w.index]);
      }
      const auto begin = Clock::now();
      r.touched = std::max(r.touched, execute(op));
      const auto work = Clock::now() - begin;
      const auto planned = std::chrono::duration_cast<Clock::duration>(
          std::chrono::duration<double>(op.seconds * scale));
      const auto deadline = ready + std::max(planned, work);
      r.overrun +=
          std::chrono::duration<double>(std::max(work - planned, Clock::duration{})).count();
      wait_until(deadline);
      previous = deadline;
      ends_[stream_][i] = deadline;  // published by the release below
      done_[stream_].store(static_cast<std::uint32_t>(i + 1), std::memory_order_release);
      done_[stream_].notify_all();
    }
    r.end = ops.empty() ? start : Clock::now();
    return r;
  }

 private:
  void await(const Wait& w) const {
    auto& counter = done_[static_cast<std::size_t>(w.stream)];
    std::uint32_t v = counter.load(std::memory_order_acquire);
    while (v <= w.index) {
      counter.wait(v, std::memory_order_acquire);
      v = counter.load(std::memory_order_acquire);
    }
  }

  // Returns one past the highest arena byte it used.
  std::uint64_t execute(const Op& op) const {
    std::uint64_t top = 0;
    auto used = [&top](const TensorRange& r) {
      if (r.bytes > 0) top = std::max(top, r.offset + r.bytes);
    };
    switch (op.kind) {
      case OpKind::kCompute:
        // Inputs first: an output never overwrites an input in a valid
        // layout, and in a broken one the read sees the state before.
        for (const TensorRange& r : op.reads) {
          outcomes_[r.check] = static_cast<std::uint8_t>(check_pattern(arena_, r));
          used(r);
        }
        for (const TensorRange& r : op.writes) {
          write_pattern(arena_, r);
          used(r);
        }
        break;
      case OpKind::kFree:
        if (program_.poison_frees)
          for (const TensorRange& r : op.writes) {
            std::memset(arena_ + r.offset, kPoisonByte, r.bytes);
            used(r);
          }
        break;
      case OpKind::kCopyOut:
        std::memcpy(pool_ + op.host_offset, arena_ + op.device.offset, op.device.bytes);
        used(op.device);
        break;
      case OpKind::kCopyIn:
        std::memcpy(arena_ + op.device.offset, pool_ + op.host_offset, op.device.bytes);
        used(op.device);
        break;
    }
    return top;
  }

  const Program& program_;
  std::size_t stream_;
  std::byte* arena_;
  std::byte* pool_;
  std::array<std::atomic<std::uint32_t>, kStreamCount>& done_;
  Ends& ends_;                           // each stream's vector written by its own thread only
  std::vector<std::uint8_t>& outcomes_;  // each index written by one op only
};

}  // namespace

void write_pattern(std::byte* base, const TensorRange& range) {
  std::byte* p = base + range.offset;
  const std::uint64_t words = range.bytes / 8;
  std::uint64_t expected = range.seed;
  for (std::uint64_t i = 0; i < words; ++i, expected += kPatternStride)
    std::memcpy(p + 8 * i, &expected, sizeof expected);
  for (std::uint64_t b = 0; b < range.bytes % 8; ++b)
    p[8 * words + b] = static_cast<std::byte>(expected >> (8 * b));
}

CheckOutcome check_pattern(const std::byte* base, const TensorRange& range) {
  const std::byte* p = base + range.offset;
  const std::uint64_t words = range.bytes / 8;
  // One branch-free pass for the common case; the slow path below says what
  // was found instead.
  std::uint64_t diff = 0;
  std::uint64_t expected = range.seed;
  for (std::uint64_t i = 0; i < words; ++i, expected += kPatternStride)
    diff |= load_word(p + 8 * i) ^ expected;
  for (std::uint64_t b = 0; b < range.bytes % 8; ++b)
    diff |= static_cast<std::uint64_t>(p[8 * words + b]) ^ ((expected >> (8 * b)) & 0xFF);
  if (diff == 0) return CheckOutcome::kOk;
  for (std::uint64_t i = 0; i < words; ++i)
    if (load_word(p + 8 * i) != pattern_word(range.seed, i))
      return load_word(p + 8 * i) == kPoisonWord ? CheckOutcome::kFreedMemory
                                                 : CheckOutcome::kWrongBytes;
  return static_cast<std::uint8_t>(p[8 * words]) == kPoisonByte ? CheckOutcome::kFreedMemory
                                                                : CheckOutcome::kWrongBytes;
}

HostSpeed measure_host_speed() {
  // Larger than the caches, so the rates are memory's, as in a real run.
  constexpr std::uint64_t kBytes = std::uint64_t{32} << 20;
  std::vector<std::byte> a(kBytes), b(kBytes);
  const TensorRange r{0, kBytes, pattern_seed("calibration"), 0};
  auto rate = [&](auto&& work) {
    work();  // warm: page faults, caches
    const auto t0 = Clock::now();
    work();
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    return s > 0 ? static_cast<double>(kBytes) / s : 1e12;
  };
  HostSpeed speed;
  speed.fill_bytes_per_s = rate([&] { write_pattern(a.data(), r); });
  volatile CheckOutcome sink = CheckOutcome::kOk;
  speed.check_bytes_per_s = rate([&] { sink = check_pattern(a.data(), r); });
  speed.copy_bytes_per_s = rate([&] { std::memcpy(b.data(), a.data(), kBytes); });
  // Thread hand-offs and clock reads; measured wake-ups are 5-50 us on a
  // busy machine, most ops wait for nobody.
  speed.op_seconds = 2e-6;
  return speed;
}

double host_time_scale(const Program& program, const HostSpeed& speed, double tolerance) {
  double planned_compute = 0;
  for (const Op& op : program.streams[0]) planned_compute += op.seconds;
  if (planned_compute <= 0) return 1;
  std::array<std::vector<std::pair<double, double>>, kStreamCount> work;  // (work, planned)
  for (std::size_t s = 0; s < kStreamCount; ++s)
    for (const Op& op : program.streams[s])
      work[s].emplace_back(work_seconds(op, speed, program.poison_frees), op.seconds);
  // The host's excess over the plan, per stream, shrinks as the scale grows.
  auto fits = [&](double scale) {
    for (const auto& ops : work) {
      double excess = 0;
      for (const auto& [w, planned] : ops) excess += std::max(0.0, w - planned * scale);
      if (excess > tolerance * planned_compute * scale) return false;
    }
    return true;
  };
  double lo = 1, hi = 1;
  while (!fits(hi) && hi < 1e9) hi *= 2;
  if (hi == 1) return 1;
  lo = hi / 2;
  for (int i = 0; i < 30; ++i) {
    const double mid = std::sqrt(lo * hi);
    (fits(mid) ? hi : lo) = mid;
  }
  // Two significant digits, rounded up: a scale people can repeat.
  const double unit = std::pow(10.0, std::floor(std::log10(hi)) - 1);
  return std::ceil(hi / unit) * unit;
}

void HostBackend::FreeDeleter::operator()(std::byte* p) const { std::free(p); }

HostBackend::Memory HostBackend::allocate(std::uint64_t bytes, std::uint64_t* allocated) {
  // Page-aligned and rounded to pages: std::aligned_alloc requires a size
  // that is a multiple of the alignment; never zero, so the pointer is real.
  constexpr std::uint64_t kPage = 4096;
  const std::uint64_t size = std::max<std::uint64_t>(kPage, (bytes + kPage - 1) / kPage * kPage);
  void* p = std::aligned_alloc(kPage, size);
  if (p == nullptr)
    throw Error("host backend: cannot allocate " + std::to_string(bytes) + " bytes",
                ExitCode::kBadInput);
  if (allocated != nullptr) *allocated = size;
  return Memory(static_cast<std::byte*>(p));
}

HostBackend::HostBackend() = default;
HostBackend::~HostBackend() = default;

double HostBackend::default_time_scale(const Program& program) {
  return host_time_scale(program, measure_host_speed());
}

void HostBackend::prepare(const Program& program) {
  arena_bytes_ = program.arena_bytes;
  pool_bytes_ = program.host_pool_bytes;
  arena_ = allocate(arena_bytes_, &allocated_bytes_);
  pool_ = allocate(pool_bytes_);
}

Measurement HostBackend::run(const Program& program) {
  // Untimed: poison both memories (this also faults every page in before
  // the clock starts) and write what is resident at the start.
  std::memset(arena_.get(), kPoisonByte, arena_bytes_);
  std::memset(pool_.get(), kPoisonByte, pool_bytes_);
  std::uint64_t touched = 0;
  auto used = [&touched](const TensorRange& r) {
    if (r.bytes > 0) touched = std::max(touched, r.offset + r.bytes);
  };
  for (const TensorRange& r : program.initial) {
    write_pattern(arena_.get(), r);
    used(r);
  }
  for (const TensorRange& r : program.initial_host) write_pattern(pool_.get(), r);

  Measurement m;
  m.outcomes.assign(program.check_count, 0);
  std::array<std::atomic<std::uint32_t>, kStreamCount> done{};
  std::atomic<bool> go{false};
  std::array<StreamRunner::Result, kStreamCount> results{};
  StreamRunner::Ends ends;
  for (std::size_t s = 0; s < kStreamCount; ++s) ends[s].resize(program.streams[s].size());
  Clock::time_point start;
  {
    std::vector<std::jthread> threads;
    for (std::size_t s = 0; s < kStreamCount; ++s)
      threads.emplace_back([&, s] {
        // Sleeps end on time (Linux rounds them up by 50 us by default).
        prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
        go.wait(false, std::memory_order_acquire);
        StreamRunner runner(program, s, arena_.get(), pool_.get(), done, ends, m.outcomes);
        results[s] = runner.run(start);
      });
    start = Clock::now();
    go.store(true, std::memory_order_release);
    go.notify_all();
  }  // jthreads join here
  Clock::time_point end = start;
  m.overrun_seconds.emplace();
  for (std::size_t s = 0; s < kStreamCount; ++s) {
    if (!program.streams[s].empty()) end = std::max(end, results[s].end);
    (*m.overrun_seconds)[s] = results[s].overrun;
    touched = std::max(touched, results[s].touched);
  }
  m.seconds = std::chrono::duration<double>(end - start).count();

  for (const TensorRange& r : program.final_reads) {
    m.outcomes[r.check] = static_cast<std::uint8_t>(check_pattern(arena_.get(), r));
    used(r);
  }
  // The pool is not the arena: these touch no arena byte.
  for (const TensorRange& r : program.final_host_reads)
    m.outcomes[r.check] = static_cast<std::uint8_t>(check_pattern(pool_.get(), r));
  m.touched_bytes = touched;
  return m;
}

}  // namespace memplan::runtime
