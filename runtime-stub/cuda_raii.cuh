#pragma once
// RAII owners for the CUDA runtime's handles and memory, and the one error
// check every call goes through. Included by the .cu files only.
#include <cuda_runtime.h>

#include <string>
#include <utility>

#include "util/errors.h"

namespace memplan::runtime::cuda {

// A failed CUDA call: one line naming the call and CUDA's reason. Exit code
// 2 like any other input the machine cannot serve (no device, no memory).
inline void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess)
    throw Error(std::string("CUDA: ") + what + ": " + cudaGetErrorString(status),
                ExitCode::kBadInput);
}

// Owns one handle; `Destroy` releases it. Move-only. Destroy's error is
// dropped: a destructor has nowhere to report it, and the only ones it can
// give follow an earlier error that was reported.
template <typename T, cudaError_t (*Destroy)(T)>
class Owned {
 public:
  Owned() = default;
  explicit Owned(T handle) : handle_(handle) {}
  ~Owned() { reset(); }
  Owned(Owned&& other) noexcept : handle_(std::exchange(other.handle_, T{})) {}
  Owned& operator=(Owned&& other) noexcept {
    if (this != &other) {
      reset();
      handle_ = std::exchange(other.handle_, T{});
    }
    return *this;
  }
  Owned(const Owned&) = delete;
  Owned& operator=(const Owned&) = delete;

  T get() const { return handle_; }
  void reset() {
    if (handle_ != T{}) static_cast<void>(Destroy(std::exchange(handle_, T{})));
  }

 private:
  T handle_{};
};

using DeviceMemory = Owned<void*, cudaFree>;
using PinnedMemory = Owned<void*, cudaFreeHost>;
using StreamHandle = Owned<cudaStream_t, cudaStreamDestroy>;
using EventHandle = Owned<cudaEvent_t, cudaEventDestroy>;
using GraphHandle = Owned<cudaGraph_t, cudaGraphDestroy>;
using GraphExecHandle = Owned<cudaGraphExec_t, cudaGraphExecDestroy>;

inline DeviceMemory device_malloc(std::size_t bytes, const char* what) {
  void* p = nullptr;
  check(cudaMalloc(&p, bytes), what);
  return DeviceMemory(p);
}

// Pinned (page-locked) host memory: copies to and from it run on the copy
// engines asynchronously, which pageable memory cannot.
inline PinnedMemory pinned_malloc(std::size_t bytes, const char* what) {
  void* p = nullptr;
  check(cudaHostAlloc(&p, bytes, cudaHostAllocDefault), what);
  return PinnedMemory(p);
}

inline StreamHandle make_stream() {
  cudaStream_t s = nullptr;
  // Non-blocking: the legacy default stream must not serialize ours.
  check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  return StreamHandle(s);
}

inline EventHandle make_event(bool timing) {
  cudaEvent_t e = nullptr;
  check(cudaEventCreateWithFlags(&e, timing ? cudaEventDefault : cudaEventDisableTiming),
        "cudaEventCreateWithFlags");
  return EventHandle(e);
}

}  // namespace memplan::runtime::cuda
