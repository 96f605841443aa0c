#pragma once
// The state the schedule rules of PLAN_FORMAT.md speak of, replayed step by
// step: which tensors are resident, which have a current host copy (one made
// after the tensor's last in-place write, ir/in_place_writes.h), which nodes
// have run, and the device bytes in use (an ir::MemoryTracker over the
// storage owners). The validator checks each step against it and the simulator
// reads memory and "made resident" events from it, so the two cannot
// disagree on what a step does.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/memory_tracker.h"
#include "planner/plan.h"

namespace memplan::planner {

class Residency {
 public:
  // The initial state: graph inputs and initializers resident, nothing else,
  // except those in `plan.initial_host`, which have a host copy and no
  // device bytes. `plan.alias_of` must be acyclic and in range and
  // `plan.initial_host` in range (the validator checks both before building
  // one); aliases occupy no bytes of their own.
  Residency(const ir::Graph& graph, const Plan& plan);

  // The rule `step` would break in this state, as one line that names the
  // node or tensor (without a "step i" prefix); empty when it may run.
  std::string check(const Step& step) const;
  // Applies the step's effect and returns the storage owners it made
  // resident (valid until the next call), in the step's output order: what
  // a memory layout places. Tolerates steps that check() rejects without
  // corrupting the byte count, so a simulation of a bad plan still ends.
  std::span<const ir::TensorId> apply(const Step& step);

  // An alias is resident when its base is and it has been made (its
  // producer ran, or it was resident at the start).
  bool resident(ir::TensorId t) const;
  // Whether storage owner t holds an allocation (an alias's base does while
  // the alias is not made yet).
  bool storage_resident(ir::TensorId t) const { return memory_.resident(t); }
  // A host copy made after t's last in-place write: what a swap_in may bring.
  bool host_copy(ir::TensorId t) const { return host_copy_[base(t)]; }
  // The node that last wrote t in place, or ir::kNoNode.
  ir::NodeId last_write(ir::TensorId t) const { return last_write_[base(t)]; }
  bool computed(ir::NodeId n) const { return computed_[n]; }
  // The tensor that owns t's storage: t itself unless t is an alias.
  ir::TensorId base(ir::TensorId t) const { return base_[t]; }
  bool is_alias(ir::TensorId t) const { return base_[t] != t; }

  std::uint64_t bytes_in_use() const { return memory_.bytes_in_use(); }
  std::uint64_t peak_bytes() const { return memory_.peak_bytes(); }

 private:
  void allocate(ir::TensorId t);
  std::string input_rule(ir::NodeId n) const;
  std::string swap_in_rule(ir::TensorId t) const;
  void write_in_place(ir::NodeId n);

  const ir::Graph& graph_;
  std::vector<ir::TensorId> base_;
  ir::MemoryTracker memory_;             // storage, by base id
  std::vector<bool> made_;               // an alias's producer has run
  std::vector<bool> host_copy_;          // by base id: current (not stale)
  std::vector<bool> copied_;             // by base id: had a host copy once
  std::vector<ir::NodeId> last_write_;   // by base id: last in-place writer
  std::vector<bool> computed_;           // by node id
  std::vector<ir::TensorId> allocated_;  // apply()'s answer
};

// Where alias_of is broken (out of range, self, cycle) as one line; empty
// when it is well formed. Linear in the number of tensors.
std::string alias_problem(const ir::Graph& graph, const Plan& plan);

}  // namespace memplan::planner
