#include "planner/reload_plan.h"

#include <algorithm>

namespace memplan::planner::detail {
namespace {

bool is_pinned(const ir::Tensor& t) {
  return t.initially_resident() || t.is_graph_output || t.producer == ir::kNoNode;
}

// Training state that may be swapped (TensorPlan::state).
bool is_state(const ir::Tensor& t) { return t.initially_resident() && !t.is_graph_output; }

// The last node of a swapped or recomputed tensor's first segment: its last
// forward reader, or its producer when no forward node reads it (a tensor
// read only by the backward part is evicted as soon as it is made). For
// training state (no producer) without a forward reader: kNoNode, it leaves
// at the start.
ir::NodeId evict_point(const ir::Graph& graph, const ir::Tensor& t) {
  ir::NodeId f = t.producer;
  for (ir::NodeId c : t.consumers)
    if (graph.node(c).is_forward) f = f == ir::kNoNode ? c : std::max(f, c);
  return f;
}

std::uint32_t segment_end(const TensorPlan& p, std::size_t k) {
  return k + 1 < p.segment_begin.size() ? p.segment_begin[k + 1]
                                        : static_cast<std::uint32_t>(p.uses.size());
}

void set_reload_turns(TensorPlan& p) {
  p.reload_turn.assign(p.segment_begin.size(), ir::kNoNode);
  for (std::size_t k = 1; k < p.segment_begin.size(); ++k)
    p.reload_turn[k] = p.uses[p.segment_begin[k]].node;
}

void cut_host_segments(TensorPlan& p, const std::vector<ir::NodeId>* splits);
void add_splits(TensorPlan& p, std::uint32_t first_later, const std::vector<ir::NodeId>* splits);

// Sorts the uses (now complete) and cuts them into segments.
void cut_segments(TensorPlan& p, const std::vector<ir::NodeId>* splits) {
  std::sort(p.uses.begin(), p.uses.end());
  p.uses.erase(std::unique(p.uses.begin(), p.uses.end()), p.uses.end());
  p.segment_begin.assign(1, 0);
  if (p.reload == Decision::kKeep) return;
  if (p.on_host) return cut_host_segments(p, splits);
  // State that no forward node reads leaves at the start: every read is later.
  auto later = p.state && p.evict_after == ir::kNoNode
                   ? p.uses.begin()
                   : std::find_if(p.uses.begin(), p.uses.end(),
                                  [&](const UsePos& u) { return u.node > p.evict_after; });
  const auto first_later = static_cast<std::uint32_t>(later - p.uses.begin());
  // Nothing reads it after its eviction (no backward reader, no recompute
  // chain through it): evicting would gain nothing.
  if (first_later == p.uses.size()) {
    p.applied = p.reload = Decision::kKeep;
    p.pinned = p.pinned || p.state;
    p.state = false;
    return;
  }
  p.segment_begin.push_back(first_later);
  add_splits(p, first_later, splits);
}

// TensorPlan::on_host: an empty segment 0 (not resident at the start), one
// reloaded segment from its first read, and for a swap a second one after
// its last forward reader.
void cut_host_segments(TensorPlan& p, const std::vector<ir::NodeId>* splits) {
  if (p.uses.empty()) return;  // read by nothing: it never comes to the device
  p.segment_begin.push_back(0);
  std::uint32_t first_later = 0;
  if (p.applied == Decision::kSwap && p.evict_after != ir::kNoNode) {
    const auto later = std::find_if(p.uses.begin(), p.uses.end(),
                                    [&](const UsePos& u) { return u.node > p.evict_after; });
    const auto at = static_cast<std::uint32_t>(later - p.uses.begin());
    if (at > 0 && at < p.uses.size()) {
      p.segment_begin.push_back(at);
      first_later = at;
    }
  }
  add_splits(p, first_later, splits);
}

void add_splits(TensorPlan& p, std::uint32_t first_later, const std::vector<ir::NodeId>* splits) {
  if (splits == nullptr) return set_reload_turns(p);
  // Segment 0 may be empty (begin 0 twice), so only the splits are sorted
  // and deduplicated.
  const std::size_t fixed = p.segment_begin.size();
  for (ir::NodeId turn : *splits) {
    // The first read in or after that turn; reads of earlier turns stay in
    // the segment before, so a reload never falls between two reads of the
    // same turn (it is issued before the turn starts).
    const auto s = static_cast<std::uint32_t>(
        std::lower_bound(p.uses.begin(), p.uses.end(), UsePos{turn, 0}) - p.uses.begin());
    if (s > first_later && s < p.uses.size()) p.segment_begin.push_back(s);
  }
  const auto extra = p.segment_begin.begin() + static_cast<std::ptrdiff_t>(fixed);
  std::sort(extra, p.segment_begin.end());
  p.segment_begin.erase(std::unique(extra, p.segment_begin.end()), p.segment_begin.end());
  set_reload_turns(p);
}

// Whether a recompute of `x` gives back its values: its producer is not
// random, or is a Dropout whose mask is kept (plan_reloads then keeps the
// mask resident up to every recompute of the Dropout).
bool recomputable(const std::vector<Decision>& requested, const ir::Node& producer) {
  if (!producer.is_random()) return true;
  const ir::TensorId mask = producer.dropout_mask();
  return mask != ir::kNoTensor && (mask >= requested.size() || requested[mask] == Decision::kKeep);
}

// Whether a chain may remake `t` where it was freed: its producer is not
// random, or `t` is a Dropout's output whose mask is kept (the mask is a
// sibling output, so its segments are cut before the chain's turns are
// known: it cannot be brought back for one).
bool remakable_in_chain(const std::vector<Decision>& applied, const ir::Node& producer,
                        ir::TensorId t) {
  if (!producer.is_random()) return true;
  const ir::TensorId mask = producer.dropout_mask();
  return mask != ir::kNoTensor && mask != t &&
         (mask >= applied.size() || applied[mask] == Decision::kKeep);
}

// Each recompute-reloaded output of `node` whose segment opens in a later
// turn than a sibling's, small beside what that turn remakes and freed
// before it, opens in that turn instead (kSiblingHoldRatio). `due` gathers
// the bytes each turn remakes as first cut, so a moved output never draws a
// later one after it.
void hold_small_siblings(const ir::Graph& graph, ir::NodeId n, ReloadPlan& plan) {
  const ir::Node& node = graph.node(n);
  std::vector<std::pair<ir::NodeId, std::uint64_t>> due;  // (turn, bytes remade there)
  for (ir::TensorId out : node.outputs) {
    const TensorPlan& p = plan.tensors[out];
    if (p.reload != Decision::kRecompute) continue;
    for (std::size_t k = 1; k < p.segment_begin.size(); ++k)
      due.emplace_back(p.reload_turn[k], graph.tensor(out).bytes);
  }
  if (due.size() < 2) return;
  std::sort(due.begin(), due.end());
  std::size_t turns = 0;  // one entry per turn, its bytes summed
  for (const auto& [turn, bytes] : due) {
    if (turns > 0 && due[turns - 1].first == turn) {
      due[turns - 1].second += bytes;
    } else {
      due[turns++] = {turn, bytes};
    }
  }
  due.resize(turns);
  for (ir::TensorId out : node.outputs) {
    TensorPlan& p = plan.tensors[out];
    if (p.reload != Decision::kRecompute) continue;
    const std::uint64_t bytes = graph.tensor(out).bytes;
    for (std::size_t k = 1; k < p.segment_begin.size(); ++k) {
      // Freed after its previous segment's last read (or its eviction).
      const std::uint32_t b = p.segment_begin[k];
      const ir::NodeId gone =
          b > p.segment_begin[k - 1] ? p.uses[b - 1].node : std::max(p.evict_after, n);
      for (const auto& [turn, remade] : due) {
        if (turn >= p.reload_turn[k]) break;
        if (turn > gone && bytes * kSiblingHoldRatio <= remade) {
          p.reload_turn[k] = turn;
          break;
        }
      }
    }
  }
}

// A tensor's plan before any recompute read is known: its decision as it
// applies, where its first segment ends, and its own readers.
TensorPlan first_segment(const ir::Graph& graph, const std::vector<Decision>& applied,
                         ir::TensorId t) {
  const ir::Tensor& x = graph.tensor(t);
  TensorPlan p;
  const Decision d = t < applied.size() ? applied[t] : Decision::kKeep;
  p.on_host = x.starts_on_host && is_state(x);
  p.state = is_state(x) && d == Decision::kSwap && !p.on_host;
  p.pinned = is_pinned(x) && !p.state && !p.on_host;
  p.applied = p.pinned ? Decision::kKeep : d;
  p.reload = p.on_host ? Decision::kSwap : p.applied;
  if (p.on_host) {
    // Swapped in whatever the decision: keep holds it from its first read
    // to its last.
    p.evict_after = p.applied == Decision::kSwap ? evict_point(graph, x) : ir::kNoNode;
    p.applied = Decision::kSwap;
  } else if (p.applied != Decision::kKeep) {
    p.evict_after = evict_point(graph, x);
  } else if (!p.pinned && remakable_in_chain(applied, graph.node(x.producer), t)) {
    // Freed where the baseline frees it; remade if a chain needs it later
    // (a Dropout's output from its mask, as the problem's chains price
    // it; held from the forward instead, it would be memory the model
    // never counted).
    p.reload = Decision::kRecompute;
    p.evict_after = x.consumers.empty() ? x.producer : x.consumers.back();
  }
  p.uses.reserve(x.consumers.size());
  for (ir::NodeId c : x.consumers) p.uses.push_back({c, ir::kNoNode});
  return p;
}

}  // namespace

std::vector<Decision> applicable_decisions(const ir::Graph& graph,
                                           const std::vector<Decision>& requested) {
  const auto& tensors = graph.tensors();
  std::vector<Decision> applied(tensors.size(), Decision::kKeep);
  for (ir::TensorId t = 0; t < tensors.size(); ++t) {
    const Decision d = t < requested.size() ? requested[t] : Decision::kKeep;
    const ir::Tensor& x = tensors[t];
    if (d == Decision::kKeep || (is_pinned(x) && !(d == Decision::kSwap && is_state(x)))) continue;
    // A random node would not reproduce the same values; a Dropout does
    // from its kept mask.
    if (d == Decision::kRecompute && !recomputable(requested, graph.node(x.producer))) continue;
    // Whether anything reads it after its eviction is settled by
    // plan_reloads: a recompute chain may read a tensor no backward node does.
    applied[t] = d;
  }
  return applied;
}

ReloadPlan plan_reloads(const ir::Graph& graph, const std::vector<Decision>& applied,
                        const std::vector<std::vector<ir::NodeId>>& splits) {
  const auto& tensors = graph.tensors();
  const auto& nodes = graph.nodes();
  ReloadPlan plan;
  plan.tensors.resize(tensors.size());
  plan.reloads_before.resize(nodes.size());
  for (ir::TensorId t = 0; t < tensors.size(); ++t)
    plan.tensors[t] = first_segment(graph, applied, t);
  auto splits_of = [&](ir::TensorId t) { return t < splits.size() ? &splits[t] : nullptr; };

  // Backwards over the nodes: a recompute of node n reads n's inputs, all
  // made by earlier nodes, so by the time a node is reached every read of
  // its outputs is known and their segments can be cut.
  std::vector<ir::NodeId> turns;
  std::vector<ir::TensorId> inputs;
  for (ir::NodeId n = static_cast<ir::NodeId>(nodes.size()); n-- > 0;) {
    const ir::Node& node = nodes[n];
    turns.clear();
    for (ir::TensorId out : node.outputs) cut_segments(plan.tensors[out], splits_of(out));
    if (node.outputs.size() > 1) hold_small_siblings(graph, n, plan);
    for (ir::TensorId out : node.outputs) {
      const TensorPlan& p = plan.tensors[out];
      for (std::size_t k = 1; k < p.segment_begin.size(); ++k) {
        const ir::NodeId turn = p.reload_turn[k];
        plan.reloads_before[turn].push_back(out);
        if (p.reload == Decision::kRecompute) turns.push_back(turn);
      }
    }
    if (turns.empty()) continue;
    // Siblings reloaded in the same turn share one recompute step.
    std::sort(turns.begin(), turns.end());
    turns.erase(std::unique(turns.begin(), turns.end()), turns.end());
    inputs = node.inputs;
    // A Dropout is remade from its mask: the mask is read at every turn too,
    // so it stays resident (or comes back) until the last one.
    if (node.dropout_mask() != ir::kNoTensor) inputs.push_back(node.dropout_mask());
    std::sort(inputs.begin(), inputs.end());
    inputs.erase(std::unique(inputs.begin(), inputs.end()), inputs.end());
    for (ir::NodeId turn : turns)
      for (ir::TensorId in : inputs) plan.tensors[in].uses.push_back({turn, n});
  }
  for (ir::TensorId t = 0; t < tensors.size(); ++t)
    if (tensors[t].producer == ir::kNoNode) cut_segments(plan.tensors[t], splits_of(t));
  // Swapped state is reloaded like any swapped tensor.
  for (ir::TensorId t = 0; t < tensors.size(); ++t) {
    const TensorPlan& p = plan.tensors[t];
    if (!p.state && !p.on_host) continue;
    for (std::size_t k = 1; k < p.segment_begin.size(); ++k)
      plan.reloads_before[p.reload_turn[k]].push_back(t);
  }

  for (auto& turn : plan.reloads_before) {
    std::sort(turn.begin(), turn.end(), [&](ir::TensorId a, ir::TensorId b) {
      const bool swap_a = plan.tensors[a].reload == Decision::kSwap;
      const bool swap_b = plan.tensors[b].reload == Decision::kSwap;
      // State (no producer) first: a recompute in the turn may read it.
      const bool state_a = tensors[a].producer == ir::kNoNode;
      const bool state_b = tensors[b].producer == ir::kNoNode;
      if (state_a != state_b) return state_a;
      if (tensors[a].producer != tensors[b].producer)
        return tensors[a].producer < tensors[b].producer;
      if (swap_a != swap_b) return swap_b;
      return a < b;
    });
  }
  return plan;
}

std::uint32_t segment_size(const TensorPlan& p, std::size_t k) {
  return segment_end(p, k) - p.segment_begin[k];
}

}  // namespace memplan::planner::detail
