#include "ir/memory_tracker.h"

namespace memplan::ir {

MemoryTracker::MemoryTracker(std::vector<std::uint64_t> bytes)
    : bytes_(std::move(bytes)), resident_(bytes_.size(), 0) {}

MemoryTracker MemoryTracker::at_start(const ir::Graph& graph) {
  std::vector<std::uint64_t> bytes;
  bytes.reserve(graph.tensors().size());
  for (const ir::Tensor& t : graph.tensors()) bytes.push_back(t.bytes);
  MemoryTracker tracker(std::move(bytes));
  for (TensorId t = 0; t < graph.tensors().size(); ++t)
    if (graph.tensor(t).initially_resident()) tracker.allocate(t);
  return tracker;
}

bool MemoryTracker::allocate(TensorId t) {
  if (resident_[t]) return false;
  resident_[t] = 1;
  in_use_ += bytes_[t];
  if (in_use_ > peak_) peak_ = in_use_;
  return true;
}

bool MemoryTracker::release(TensorId t) {
  if (!resident_[t]) return false;
  resident_[t] = 0;
  in_use_ -= bytes_[t];
  return true;
}

std::vector<TensorId> MemoryTracker::resident_tensors() const {
  std::vector<TensorId> out;
  for (TensorId t = 0; t < resident_.size(); ++t)
    if (resident_[t]) out.push_back(t);
  return out;
}

std::string MemoryTracker::check() const {
  std::uint64_t recount = 0;
  for (TensorId t = 0; t < resident_.size(); ++t)
    if (resident_[t]) recount += bytes_[t];
  if (recount != in_use_)
    return "memory tracker: " + std::to_string(in_use_) + " B counted in use, but the " +
           "resident tensors hold " + std::to_string(recount) + " B";
  if (peak_ < in_use_)
    return "memory tracker: peak " + std::to_string(peak_) + " B is below the " +
           std::to_string(in_use_) + " B in use";
  return {};
}

}  // namespace memplan::ir
