#pragma once
// The CUDA backend (cuda_backend.cu): one cudaMalloc arena, a cudaHostAlloc
// pool, three streams and events, stub kernels. Declared for every build;
// built when nvcc was found (MEMPLAN_HAVE_CUDA), else backends.cc stands in.
#include <memory>
#include <string>

#include "runtime-stub/backend.h"

namespace memplan::runtime {

// Why the CUDA backend cannot run on this machine (no driver, no device),
// as one line; empty when it can.
std::string cuda_unavailable_reason();

// Throws InputError (exit code 2) with cuda_unavailable_reason() when it
// cannot run. Both are defined in every build (backends.cc without nvcc).
std::unique_ptr<Backend> make_cuda_backend();

}  // namespace memplan::runtime
