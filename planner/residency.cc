#include "planner/residency.h"

#include "ir/in_place_writes.h"

namespace memplan::planner {
namespace {

std::string quote_name(const std::string& name) { return "'" + name + "'"; }

// Follows alias_of to the storage owner. States: 0 unseen, 1 on the current
// chain, 2 resolved. A cycle or an out-of-range link leaves the tensor as
// its own base; alias_problem() reports those.
std::vector<ir::TensorId> resolve_bases(std::size_t count,
                                        const std::vector<ir::TensorId>& alias_of) {
  std::vector<ir::TensorId> base(count);
  for (ir::TensorId t = 0; t < count; ++t) base[t] = t;
  if (alias_of.size() != count) return base;
  std::vector<std::uint8_t> state(count, 0);
  std::vector<ir::TensorId> chain;
  for (ir::TensorId start = 0; start < count; ++start) {
    if (state[start] != 0) continue;
    ir::TensorId t = start;
    chain.clear();
    while (state[t] == 0) {
      state[t] = 1;
      chain.push_back(t);
      ir::TensorId next = alias_of[t];
      if (next == ir::kNoTensor || next >= count || next == t) break;
      t = next;
    }
    // t is the chain's end (its own base), already resolved, or on the
    // chain again (a cycle: every member stays its own base).
    ir::TensorId root = state[t] == 2 ? base[t] : t;
    bool cycle = state[t] == 1 && t != chain.back();
    for (ir::TensorId c : chain) {
      base[c] = cycle ? c : root;
      state[c] = 2;
    }
  }
  return base;
}

// plan.tensor_bytes for each of the graph's tensors; those it lacks take
// no bytes.
std::vector<std::uint64_t> storage_bytes(const ir::Graph& graph, const Plan& plan) {
  std::vector<std::uint64_t> bytes(graph.tensors().size(), 0);
  for (std::size_t t = 0; t < bytes.size() && t < plan.tensor_bytes.size(); ++t)
    bytes[t] = plan.tensor_bytes[t];
  return bytes;
}

}  // namespace

std::string alias_problem(const ir::Graph& graph, const Plan& plan) {
  const std::size_t n = graph.tensors().size();
  if (plan.alias_of.empty()) return {};
  if (plan.alias_of.size() != n)
    return "alias_of has " + std::to_string(plan.alias_of.size()) + " entries for " +
           std::to_string(n) + " tensors";
  for (ir::TensorId t = 0; t < n; ++t) {
    ir::TensorId a = plan.alias_of[t];
    if (a == ir::kNoTensor) continue;
    if (a >= n) return "tensor " + quote_name(graph.tensor(t).name) + ": alias_of is out of range";
    if (a == t)
      return "tensor " + quote_name(graph.tensor(t).name) + " is declared an alias of itself";
  }
  std::vector<ir::TensorId> base = resolve_bases(n, plan.alias_of);
  for (ir::TensorId t = 0; t < n; ++t)
    if (plan.alias_of[t] != ir::kNoTensor && base[t] == t)
      return "tensor " + quote_name(graph.tensor(t).name) + ": alias_of forms a cycle";
  return {};
}

Residency::Residency(const ir::Graph& graph, const Plan& plan)
    : graph_(graph),
      base_(resolve_bases(graph.tensors().size(), plan.alias_of)),
      memory_(storage_bytes(graph, plan)),
      made_(graph.tensors().size(), false),
      host_copy_(graph.tensors().size(), false),
      copied_(graph.tensors().size(), false),
      last_write_(graph.tensors().size(), ir::kNoNode),
      computed_(graph.nodes().size(), false) {
  // Offloaded state starts as a swap_out would leave it after a free: a
  // host copy and no device bytes, until a swap_in brings it.
  for (ir::TensorId t : plan.initial_host)
    if (t < graph.tensors().size()) host_copy_[t] = copied_[t] = true;
  for (ir::TensorId t = 0; t < graph.tensors().size(); ++t) {
    if (!graph.tensor(t).initially_resident()) continue;
    made_[t] = true;
    if (!host_copy_[base_[t]]) memory_.allocate(base_[t]);
  }
}

bool Residency::resident(ir::TensorId t) const {
  ir::TensorId b = base_[t];
  return memory_.resident(b) && (b == t || made_[t]);
}

void Residency::allocate(ir::TensorId t) {
  if (memory_.allocate(t)) allocated_.push_back(t);
}

std::string Residency::input_rule(ir::NodeId n) const {
  for (ir::TensorId in : graph_.node(n).inputs)
    if (!resident(in)) return "input " + quote_name(graph_.tensor(in).name) + " is not resident";
  return {};
}

std::string Residency::check(const Step& step) const {
  if (step.on_node()) {
    if (step.id >= graph_.nodes().size())
      return "node id " + std::to_string(step.id) + " is not in the graph";
    const ir::Node& node = graph_.node(step.id);
    if (step.op == StepOp::kCompute) {
      if (computed_[step.id]) return "node " + quote_name(node.name) + " is computed a second time";
    } else {
      if (!computed_[step.id])
        return "node " + quote_name(node.name) + " is recomputed before its compute step";
      if (!node.reproducible())
        return "node " + quote_name(node.name) + " (" + node.op_type +
               ") is random and cannot be recomputed";
      // A dropout is remade from its mask (ours, stricter than the format:
      // without the mask the values would differ).
      if (const ir::TensorId mask = node.dropout_mask(); mask != ir::kNoTensor && !resident(mask))
        return "node " + quote_name(node.name) + " (" + node.op_type +
               ") is recomputed from its mask " + quote_name(graph_.tensor(mask).name) +
               ", which is not resident";
    }
    return input_rule(step.id);
  }
  if (step.id >= graph_.tensors().size())
    return "tensor id " + std::to_string(step.id) + " is not in the graph";
  const std::string name = quote_name(graph_.tensor(step.id).name);
  if (is_alias(step.id))
    return name + " is an alias of " + quote_name(graph_.tensor(base(step.id)).name) +
           "; steps name the base";
  switch (step.op) {
    case StepOp::kSwapOut:
    case StepOp::kFree:
      if (!resident(step.id)) return name + " is not resident";
      break;
    case StepOp::kSwapIn:
      return swap_in_rule(step.id);
    default:
      break;
  }
  return {};
}

std::string Residency::swap_in_rule(ir::TensorId t) const {
  const std::string name = quote_name(graph_.tensor(t).name);
  if (resident(t)) return name + " is already resident";
  if (host_copy_[t]) return {};
  // A copy that a later in-place write made stale would bring back old values.
  if (copied_[t] && last_write_[t] != ir::kNoNode)
    return name + " has no current host copy: " + quote_name(graph_.node(last_write_[t]).name) +
           " wrote it after its last swap_out";
  return name + " has no host copy (no swap_out before)";
}

// The tensors node n writes in place change under their host copies.
void Residency::write_in_place(ir::NodeId n) {
  for (ir::TensorId w : ir::in_place_writes(graph_.node(n))) {
    if (w >= base_.size()) continue;
    host_copy_[base_[w]] = false;
    last_write_[base_[w]] = n;
  }
}

std::span<const ir::TensorId> Residency::apply(const Step& step) {
  allocated_.clear();
  if (step.on_node()) {
    if (step.id >= graph_.nodes().size()) return allocated_;
    computed_[step.id] = true;
    write_in_place(step.id);
    // An alias output shares its base's storage: making it allocates nothing.
    for (ir::TensorId out : graph_.node(step.id).outputs) {
      made_[out] = true;
      if (!is_alias(out)) allocate(out);
    }
  } else {
    if (step.id >= graph_.tensors().size()) return allocated_;
    ir::TensorId t = base_[step.id];
    switch (step.op) {
      case StepOp::kSwapOut:
        if (memory_.resident(t)) host_copy_[t] = copied_[t] = true;
        break;
      case StepOp::kSwapIn:
        if (host_copy_[t]) allocate(t);
        break;
      case StepOp::kFree:
        memory_.release(t);
        break;
      default:
        break;
    }
  }
  return allocated_;
}

}  // namespace memplan::planner
