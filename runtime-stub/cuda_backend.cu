// The CUDA backend: the program's three streams become three CUDA streams
// with events between them, captured once into a CUDA graph so that the
// thousands of small stub kernels are not throttled by the host's launch
// rate (what would be measured then is the CPU, not the plan).
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "runtime-stub/cuda_backend.h"
#include "runtime-stub/cuda_kernels.cuh"
#include "runtime-stub/cuda_raii.cuh"
#include "runtime-stub/host_backend.h"  // write_pattern, check_pattern: the pool is host memory
#include "runtime-stub/pattern.h"

namespace memplan::runtime {
namespace {

using cuda::check;
using cuda::DeviceRange;

constexpr std::size_t kCompute = static_cast<std::size_t>(Stream::kCompute);

// Ends a stream capture that an error interrupted, so the stream is usable
// (and destroyable) again; the partial graph is dropped.
class CaptureGuard {
 public:
  explicit CaptureGuard(cudaStream_t stream) : stream_(stream) {}
  ~CaptureGuard() {
    if (stream_ == nullptr) return;
    cudaGraph_t partial = nullptr;
    if (cudaStreamEndCapture(stream_, &partial) == cudaSuccess && partial != nullptr)
      static_cast<void>(cudaGraphDestroy(partial));
    static_cast<void>(cudaGetLastError());
  }
  CaptureGuard(const CaptureGuard&) = delete;
  CaptureGuard& operator=(const CaptureGuard&) = delete;
  cudaGraph_t end() {
    cudaGraph_t graph = nullptr;
    check(cudaStreamEndCapture(std::exchange(stream_, nullptr), &graph), "cudaStreamEndCapture");
    return graph;
  }

 private:
  cudaStream_t stream_;
};

class CudaBackend final : public Backend {
 public:
  CudaBackend() {
    check(cudaSetDevice(0), "cudaSetDevice");
    cudaDeviceProp prop{};
    check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
    device_ = prop.name;
    sms_ = static_cast<unsigned>(std::max(1, prop.multiProcessorCount));
    for (auto& s : streams_) s = cuda::make_stream();
    start_ = cuda::make_event(true);
    stop_ = cuda::make_event(true);
  }

  std::string name() const override { return "cuda (" + device_ + ")"; }
  // A GPU runs the plan's own times: its node times are what it was planned for.
  double default_time_scale(const Program&) override { return 1; }
  MemoryFigures memory() const override { return memory_; }

  void prepare(const Program& program) override {
    arena_bytes_ = program.arena_bytes;
    pool_bytes_ = program.host_pool_bytes;
    // Never zero-sized: cudaMalloc(0) gives no pointer to offset from.
    memory_ = {std::max<std::uint64_t>(arena_bytes_, 256), {}, {}};
    free_before_ = free_device_bytes();
    arena_ = cuda::device_malloc(memory_.allocated_bytes, "cudaMalloc (arena)");
    memory_.device_arena_bytes = taken_since_start();
    pool_ =
        cuda::pinned_malloc(std::max<std::uint64_t>(pool_bytes_, 256), "cudaHostAlloc (host pool)");
    checks_ = program.check_count;
    outcomes_ = cuda::device_malloc(std::max<std::uint64_t>(checks_, 1) * sizeof(unsigned),
                                    "cudaMalloc (check outcomes)");
    mismatches_ = cuda::device_malloc(sizeof(unsigned long long), "cudaMalloc (counter)");
    upload_ranges(program);
    calibrate();
    capture(program);
    memory_.device_total_bytes = taken_since_start();
  }

  Measurement run(const Program& program) override {
    cudaStream_t compute = streams_[kCompute].get();
    // Untimed: poison both memories, write what is resident at the start.
    check(cudaMemsetAsync(arena(), kPoisonByte, arena_bytes_, compute), "poisoning the arena");
    std::memset(pool_.get(), kPoisonByte, pool_bytes_);  // the last run was synchronized
    for (const TensorRange& r : program.initial_host) write_pattern(host_pool(), r);
    check(cudaMemsetAsync(outcomes_.get(), 0, checks_ * sizeof(unsigned), compute),
          "cudaMemsetAsync");
    check(cudaMemsetAsync(mismatches_.get(), 0, sizeof(unsigned long long), compute),
          "cudaMemsetAsync");
    if (!program.initial.empty())
      cuda::launch_stub(compute, blocks_for(initial_bytes_), arena(), ranges() + initial_first_, 0,
                        static_cast<unsigned>(program.initial.size()), 0, outcomes(), mismatches());

    check(cudaEventRecord(start_.get(), compute), "cudaEventRecord");
    check(cudaGraphLaunch(exec_.get(), compute), "cudaGraphLaunch");
    check(cudaEventRecord(stop_.get(), compute), "cudaEventRecord");
    check(cudaEventSynchronize(stop_.get()), "running the plan");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, start_.get(), stop_.get()), "cudaEventElapsedTime");

    if (!program.final_reads.empty())
      cuda::launch_stub(compute, blocks_for(final_bytes_), arena(), ranges() + final_first_,
                        static_cast<unsigned>(program.final_reads.size()), 0, 0, outcomes(),
                        mismatches());
    std::vector<unsigned> found(checks_);
    if (checks_ > 0)
      check(cudaMemcpyAsync(found.data(), outcomes_.get(), checks_ * sizeof(unsigned),
                            cudaMemcpyDeviceToHost, compute),
            "reading the check outcomes");
    check(cudaStreamSynchronize(compute), "checking the patterns");
    // Pinned host memory: checked where it lives, once the copies are done.
    for (const TensorRange& r : program.final_host_reads)
      found[r.check] = static_cast<unsigned>(check_pattern(host_pool(), r));
    memory_.device_total_bytes = std::max(*memory_.device_total_bytes, taken_since_start());

    Measurement m;
    m.seconds = ms / 1000.0;
    m.outcomes.assign(found.begin(), found.end());
    return m;
  }

 private:
  static std::uint64_t free_device_bytes() {
    std::size_t free = 0, total = 0;
    check(cudaMemGetInfo(&free, &total), "cudaMemGetInfo");
    return free;
  }
  // Device memory that left the free pool since prepare() began (0 if other
  // processes freed more meanwhile).
  std::uint64_t taken_since_start() const {
    const std::uint64_t now = free_device_bytes();
    return free_before_ > now ? free_before_ - now : 0;
  }

  unsigned char* arena() const { return static_cast<unsigned char*>(arena_.get()); }
  unsigned char* pool() const { return static_cast<unsigned char*>(pool_.get()); }
  std::byte* host_pool() const { return static_cast<std::byte*>(pool_.get()); }
  const DeviceRange* ranges() const { return static_cast<const DeviceRange*>(ranges_.get()); }
  unsigned* outcomes() const { return static_cast<unsigned*>(outcomes_.get()); }
  unsigned long long* mismatches() const {
    return static_cast<unsigned long long*>(mismatches_.get());
  }

  // Enough blocks that big tensors are read at memory speed, few enough
  // that a small one costs one launch's worth.
  unsigned blocks_for(std::uint64_t bytes) const {
    constexpr std::uint64_t kBytesPerBlock = 256 * 32 * 8;  // 256 threads x 32 words
    const std::uint64_t want = (bytes + kBytesPerBlock - 1) / kBytesPerBlock;
    return static_cast<unsigned>(std::clamp<std::uint64_t>(want, 1, 4 * sms_));
  }

  // Every op's ranges in one device array: a compute's reads then writes.
  void upload_ranges(const Program& program) {
    std::vector<DeviceRange> all;
    auto add = [&](const std::vector<TensorRange>& list, std::uint64_t* bytes) {
      for (const TensorRange& r : list) {
        all.push_back({r.offset, r.bytes, r.seed, r.check, 0});
        if (bytes != nullptr) *bytes += r.bytes;
      }
    };
    for (std::size_t s = 0; s < kStreamCount; ++s) {
      first_[s].clear();
      for (const Op& op : program.streams[s]) {
        first_[s].push_back(static_cast<std::uint32_t>(all.size()));
        if (op.kind != OpKind::kCompute) continue;
        add(op.reads, nullptr);
        add(op.writes, nullptr);
      }
    }
    initial_first_ = all.size();
    initial_bytes_ = 0;
    add(program.initial, &initial_bytes_);
    final_first_ = all.size();
    final_bytes_ = 0;
    add(program.final_reads, &final_bytes_);
    ranges_ = cuda::device_malloc(std::max<std::size_t>(all.size(), 1) * sizeof(DeviceRange),
                                  "cudaMalloc (ranges)");
    if (!all.empty())
      check(cudaMemcpy(ranges_.get(), all.data(), all.size() * sizeof(DeviceRange),
                       cudaMemcpyHostToDevice),
            "uploading the ranges");
  }

  // SM cycles per second, from two spins of different lengths (the
  // difference cancels the launch overhead).
  void calibrate() {
    cudaStream_t s = streams_[kCompute].get();
    auto seconds_for = [&](long long cycles) {
      check(cudaEventRecord(start_.get(), s), "cudaEventRecord");
      cuda::launch_spin(s, cycles);
      check(cudaEventRecord(stop_.get(), s), "cudaEventRecord");
      check(cudaEventSynchronize(stop_.get()), "calibrating the spin kernel");
      float ms = 0;
      check(cudaEventElapsedTime(&ms, start_.get(), stop_.get()), "cudaEventElapsedTime");
      return ms / 1000.0;
    };
    seconds_for(1'000'000);  // warm up: module load, clocks up
    const double short_run = seconds_for(2'000'000);
    const double long_run = seconds_for(20'000'000);
    if (long_run > short_run) {
      cycles_per_second_ = 18'000'000 / (long_run - short_run);
    } else {
      int khz = 0;
      check(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0), "cudaDeviceGetAttribute");
      cycles_per_second_ = khz * 1000.0;
    }
  }

  void enqueue(const Program& program, std::size_t s, std::size_t i) {
    const Op& op = program.streams[s][i];
    cudaStream_t stream = streams_[s].get();
    for (const Wait& w : op.waits)
      check(cudaStreamWaitEvent(stream, events_[event_index(w)].get(), 0), "cudaStreamWaitEvent");
    switch (op.kind) {
      case OpKind::kCompute: {
        const auto cycles = static_cast<long long>(
            std::llround(op.seconds * program.time_scale * cycles_per_second_));
        std::uint64_t bytes = 0;
        for (const TensorRange& r : op.reads) bytes += r.bytes;
        for (const TensorRange& r : op.writes) bytes += r.bytes;
        cuda::launch_stub(stream, blocks_for(bytes), arena(), ranges() + first_[s][i],
                          static_cast<unsigned>(op.reads.size()),
                          static_cast<unsigned>(op.writes.size()), cycles, outcomes(),
                          mismatches());
        break;
      }
      case OpKind::kFree:
        if (!program.poison_frees) break;
        for (const TensorRange& r : op.writes)
          check(cudaMemsetAsync(arena() + r.offset, kPoisonByte, r.bytes, stream),
                "cudaMemsetAsync (poison)");
        break;
      case OpKind::kCopyOut:
        if (op.device.bytes > 0)
          check(cudaMemcpyAsync(pool() + op.host_offset, arena() + op.device.offset,
                                op.device.bytes, cudaMemcpyDeviceToHost, stream),
                "cudaMemcpyAsync (swap_out)");
        break;
      case OpKind::kCopyIn:
        if (op.device.bytes > 0)
          check(cudaMemcpyAsync(arena() + op.device.offset, pool() + op.host_offset,
                                op.device.bytes, cudaMemcpyHostToDevice, stream),
                "cudaMemcpyAsync (swap_in)");
        break;
    }
    if (program.awaited[s][i])
      check(cudaEventRecord(
                events_[event_index({static_cast<Stream>(s), static_cast<std::uint32_t>(i)})].get(),
                stream),
            "cudaEventRecord");
  }

  std::size_t event_index(const Wait& w) const {
    return static_cast<std::size_t>(event_of_[static_cast<std::size_t>(w.stream)][w.index]);
  }

  // Issues every op in schedule order (each step made at most one op) into
  // a capture of the three streams, and instantiates the graph.
  void capture(const Program& program) {
    events_.clear();
    for (std::size_t s = 0; s < kStreamCount; ++s) {
      event_of_[s].assign(program.streams[s].size(), -1);
      for (std::size_t i = 0; i < program.streams[s].size(); ++i)
        if (program.awaited[s][i]) {
          event_of_[s][i] = static_cast<int>(events_.size());
          events_.push_back(cuda::make_event(false));
        }
    }
    cudaStream_t compute = streams_[kCompute].get();
    cuda::EventHandle fork = cuda::make_event(false);
    std::array<cuda::EventHandle, kStreamCount> joins;
    for (auto& j : joins) j = cuda::make_event(false);

    check(cudaStreamBeginCapture(compute, cudaStreamCaptureModeThreadLocal),
          "cudaStreamBeginCapture");
    CaptureGuard guard(compute);
    // The copy streams join the capture by waiting on the compute stream.
    check(cudaEventRecord(fork.get(), compute), "cudaEventRecord");
    for (std::size_t s = 0; s < kStreamCount; ++s)
      if (s != kCompute)
        check(cudaStreamWaitEvent(streams_[s].get(), fork.get(), 0), "cudaStreamWaitEvent");
    std::array<std::size_t, kStreamCount> next{};
    for (;;) {
      std::size_t pick = kStreamCount;
      for (std::size_t s = 0; s < kStreamCount; ++s)
        if (next[s] < program.streams[s].size() &&
            (pick == kStreamCount ||
             program.streams[s][next[s]].step < program.streams[pick][next[pick]].step))
          pick = s;
      if (pick == kStreamCount) break;
      enqueue(program, pick, next[pick]++);
    }
    for (std::size_t s = 0; s < kStreamCount; ++s)
      if (s != kCompute) {
        check(cudaEventRecord(joins[s].get(), streams_[s].get()), "cudaEventRecord");
        check(cudaStreamWaitEvent(compute, joins[s].get(), 0), "cudaStreamWaitEvent");
      }
    graph_ = cuda::GraphHandle(guard.end());
    cudaGraphExec_t exec = nullptr;
    check(cudaGraphInstantiate(&exec, graph_.get(), 0), "cudaGraphInstantiate");
    exec_ = cuda::GraphExecHandle(exec);
    // Uploads the graph now, so the first timed launch does not pay for it.
    check(cudaGraphUpload(exec_.get(), compute), "cudaGraphUpload");
    check(cudaStreamSynchronize(compute), "cudaGraphUpload");
  }

  std::string device_;
  unsigned sms_ = 1;
  std::array<cuda::StreamHandle, kStreamCount> streams_;
  cuda::EventHandle start_, stop_;  // timing
  cuda::DeviceMemory arena_, outcomes_, mismatches_, ranges_;
  cuda::PinnedMemory pool_;
  std::uint64_t arena_bytes_ = 0, pool_bytes_ = 0, checks_ = 0;
  std::uint64_t free_before_ = 0;  // cudaMemGetInfo's free bytes before prepare() allocated
  MemoryFigures memory_;
  std::array<std::vector<std::uint32_t>, kStreamCount> first_;  // first range of each op
  std::size_t initial_first_ = 0, final_first_ = 0;
  std::uint64_t initial_bytes_ = 0, final_bytes_ = 0;
  double cycles_per_second_ = 1e9;
  std::vector<cuda::EventHandle> events_;                // one per awaited op
  std::array<std::vector<int>, kStreamCount> event_of_;  // op -> events_ index, -1: none
  cuda::GraphHandle graph_;
  cuda::GraphExecHandle exec_;
};

}  // namespace

std::string cuda_unavailable_reason() {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    static_cast<void>(cudaGetLastError());  // clear it: later calls must not see it
    if (status == cudaErrorNoDevice) return "no CUDA device";
    if (status == cudaErrorInsufficientDriver)
      return "no CUDA driver here, or one older than this build's CUDA runtime (" +
             std::to_string(CUDART_VERSION / 1000) + "." +
             std::to_string(CUDART_VERSION % 1000 / 10) + ")";
    return std::string("no usable CUDA device (") + cudaGetErrorString(status) + ")";
  }
  if (count == 0) return "no CUDA device";
  return {};
}

std::unique_ptr<Backend> make_cuda_backend() {
  if (std::string why = cuda_unavailable_reason(); !why.empty())
    throw InputError("--backend cuda: " + why +
                     "; the host backend runs anywhere (--backend host)");
  return std::make_unique<CudaBackend>();
}

}  // namespace memplan::runtime
