#pragma once
// The backends by name, for `memplan run --backend` and the tests.
#include <memory>
#include <string>
#include <string_view>

#include "runtime-stub/backend.h"

namespace memplan::runtime {

// True when this build has the CUDA backend (nvcc was found at build time).
bool cuda_backend_built();

// "host" or "cuda". Throws UsageError for another name, and InputError (exit
// code 2, one line) when the CUDA backend cannot run here: not built, no
// driver, or no device.
std::unique_ptr<Backend> make_backend(std::string_view name);

}  // namespace memplan::runtime
