#pragma once
// Device memory followed step by step: whose storage is resident, the
// bytes in use and their peak. It is the project's one such account: the
// baseline (ir/baseline_memory), the schedule emitter, the over-budget
// diagnosis, the DTR evictor, the remat replay and planner::Residency (and
// through it the validator, simulator, layout, rewrite and executor) each
// follow memory through one, so no two of them can count a step
// differently. check() recounts it from scratch, as XLA's
// MemoryUsageTracker::Check() does. Ids are tensor ids, or any dense ids
// with a size each.
#include <cstdint>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace memplan::ir {

class MemoryTracker {
 public:
  // `bytes` by id; nothing is resident yet.
  explicit MemoryTracker(std::vector<std::uint64_t> bytes);
  // The graph's start state: its inputs and initializers resident, at the
  // graph's tensor sizes.
  static MemoryTracker at_start(const ir::Graph& graph);

  bool resident(TensorId t) const { return resident_[t] != 0; }
  std::uint64_t bytes(TensorId t) const { return bytes_[t]; }
  std::uint64_t bytes_in_use() const { return in_use_; }
  std::uint64_t peak_bytes() const { return peak_; }

  // Each returns whether it changed anything: making a resident tensor
  // resident, or releasing one that is not, is a no-op the callers rely on.
  bool allocate(TensorId t);
  bool release(TensorId t);

  // Whether `more` bytes on top of those in use stay within `budget`.
  bool fits(std::uint64_t more, std::uint64_t budget) const {
    return in_use_ <= budget && more <= budget - in_use_;
  }
  // The resident tensors, by ascending id.
  std::vector<TensorId> resident_tensors() const;

  // The bytes in use recounted from the resident set, and the peak checked
  // against them: empty when they agree, else one line saying how not.
  std::string check() const;

 private:
  std::vector<std::uint64_t> bytes_;
  std::vector<char> resident_;
  std::uint64_t in_use_ = 0;
  std::uint64_t peak_ = 0;
};

}  // namespace memplan::ir
