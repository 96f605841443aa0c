#include "runtime-stub/backends.h"

#include "runtime-stub/cuda_backend.h"
#include "runtime-stub/host_backend.h"
#include "util/errors.h"

namespace memplan::runtime {

#if defined(MEMPLAN_HAVE_CUDA)
bool cuda_backend_built() { return true; }
#else
// Without nvcc there is no cuda_backend.cu: the same calls, saying so.
bool cuda_backend_built() { return false; }

std::string cuda_unavailable_reason() {
  return "this memplan was built without the CUDA backend (no nvcc at build time)";
}

std::unique_ptr<Backend> make_cuda_backend() {
  throw InputError("--backend cuda: " + cuda_unavailable_reason() + "; use --backend host");
}
#endif

std::unique_ptr<Backend> make_backend(std::string_view name) {
  if (name == "host") return std::make_unique<HostBackend>();
  if (name == "cuda") return make_cuda_backend();
  throw UsageError("--backend '" + std::string(name) + "': expected host or cuda");
}

}  // namespace memplan::runtime
