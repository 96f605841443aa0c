#include "planner/nested_remake.h"

#include <algorithm>
#include <cstddef>
#include <limits>

#include "planner/chain_reversal.h"

namespace memplan::planner::detail {
namespace {

// What the plan says of one recomputed tensor that could be in a run.
struct Member {
  bool ok = false;
  ir::NodeId turn = 0;                // the turn that first remakes it
  ir::NodeId need = ir::kNoNode;      // its first backward read
  ir::NodeId last = 0;                // its last read
  ir::NodeId reader = ir::kNoNode;    // the one recompute that reads it (in `turn`)
  ir::TensorId pred = ir::kNoTensor;  // the run tensor before it
  ir::TensorId succ = ir::kNoTensor;  // the run tensor after it
  bool joined = false;                // its producer reads another remade tensor
};

bool small_siblings(const ir::Graph& graph, ir::TensorId t) {
  const ir::Tensor& x = graph.tensor(t);
  std::uint64_t others = 0;
  for (ir::TensorId o : graph.node(x.producer).outputs)
    if (o != t) others += graph.tensor(o).bytes;
  return others * kSiblingHoldRatio <= x.bytes;
}

// Reads after the eviction: backward reads, and chain reads in the first
// reload turn by a single recomputed node.
Member describe(const ir::Graph& graph, const TensorPlan& p, ir::TensorId t) {
  Member m;
  if (p.reload != Decision::kRecompute || p.pinned || p.segment_begin.size() != 2 ||
      graph.tensor(t).bytes == 0 || !small_siblings(graph, t))
    return m;
  m.turn = m.last = p.reload_turn[1];
  for (std::size_t i = p.segment_begin[1]; i < p.uses.size(); ++i) {
    const UsePos& u = p.uses[i];
    m.last = std::max(m.last, u.node);
    if (u.by == ir::kNoNode) {
      if (m.need == ir::kNoNode) m.need = u.node;
    } else if (u.node != m.turn || (m.reader != ir::kNoNode && m.reader != u.by)) {
      return m;
    } else {
      m.reader = u.by;
    }
  }
  m.ok = m.need != ir::kNoNode;
  return m;
}

// Whether input `x` of a recompute in `turn` is remade there (read in a
// reload segment) rather than resident from the forward or swapped in.
bool remade_for(const TensorPlan& x, ir::NodeId turn, ir::NodeId reader) {
  if (x.reload != Decision::kRecompute || x.segment_begin.size() < 2) return false;
  const auto it = std::lower_bound(x.uses.begin(), x.uses.end(), UsePos{turn, reader});
  return it != x.uses.end() && *it == UsePos{turn, reader} &&
         static_cast<std::uint32_t>(it - x.uses.begin()) >= x.segment_begin[1];
}

void link(const ir::Graph& graph, const ReloadPlan& plan, std::vector<Member>& members) {
  for (ir::TensorId y = 0; y < members.size(); ++y) {
    Member& my = members[y];
    if (!my.ok) continue;
    const ir::NodeId producer = graph.tensor(y).producer;
    ir::TensorId pred = ir::kNoTensor;
    for (ir::TensorId x : graph.node(producer).inputs) {
      if (!remade_for(plan.tensors[x], my.turn, producer)) continue;
      if (pred != ir::kNoTensor && pred != x) my.joined = true;
      pred = x;
    }
    if (my.joined || pred == ir::kNoTensor) continue;
    Member& mx = members[pred];
    if (!mx.ok || mx.reader != producer || mx.turn != my.turn || mx.succ != ir::kNoTensor) {
      my.joined = true;
      continue;
    }
    my.pred = pred;
    mx.succ = y;
  }
}

// The run from `head` on, or an empty one when it cannot be nested.
RemakeRun follow(const ir::Graph& graph, const std::vector<Member>& members, ir::TensorId head) {
  RemakeRun run;
  for (ir::TensorId t = head; t != ir::kNoTensor; t = members[t].succ) {
    const Member& m = members[t];
    if (run.tensors.size() == kMaxRemakeRun || (!run.need.empty() && m.need > run.need.back()))
      return {};
    run.tensors.push_back(t);
    run.need.push_back(m.need);
    run.last_turn = std::max(run.last_turn, m.last);
    run.bytes = std::max(run.bytes, graph.tensor(t).bytes);
  }
  const Member& end = members[run.tensors.back()];
  // The last one is what the turn is for; a recompute reading it would be
  // a chain read outside the run.
  if (run.tensors.size() < 2 || end.reader != ir::kNoNode || end.need != end.turn) return {};
  return run;
}

std::size_t first_step(const Skeleton& skeleton, ir::NodeId turn) {
  return static_cast<std::size_t>(
      std::lower_bound(skeleton.turn.begin(), skeleton.turn.end(), turn) - skeleton.turn.begin());
}

// Run positions by TensorId, -1 for others.
std::vector<std::int32_t> positions(std::size_t tensor_count, std::span<const RemakeRun> runs) {
  std::vector<std::int32_t> pos(tensor_count, -1);
  for (const RemakeRun& run : runs)
    for (std::size_t k = 0; k < run.tensors.size(); ++k)
      pos[run.tensors[k]] = static_cast<std::int32_t>(k);
  return pos;
}

// The most slots the run may take so that every slot of its turns over the
// budget loses the excess, by its bytes per slot; max() when none is over.
std::int64_t slots_within(const Skeleton& skeleton, const Placed& placed, std::uint64_t budget,
                          const ir::Graph& graph, const RemakeRun& run,
                          const std::vector<std::int32_t>& pos) {
  const std::size_t lo = first_step(skeleton, run.need.back());
  const std::size_t hi = std::min(first_step(skeleton, run.last_turn + 1), skeleton.steps.size());
  const auto cap = static_cast<std::int64_t>(
      std::min<std::uint64_t>(budget, std::numeric_limits<std::int64_t>::max()));
  const auto bytes = static_cast<std::int64_t>(run.bytes);
  std::vector<char> resident(run.tensors.size(), 0);
  std::int64_t held = 0;
  std::int64_t slots = std::numeric_limits<std::int64_t>::max();
  auto mine = [&](ir::TensorId t) {
    const auto k = static_cast<std::size_t>(pos[t]);
    return pos[t] >= 0 && k < run.tensors.size() && run.tensors[k] == t;
  };
  for (std::size_t k = lo; k <= hi; ++k) {
    if (placed.level[k] > cap)
      slots = std::min(slots, held - (placed.level[k] - cap + bytes - 1) / bytes);
    if (k == hi) break;
    const Step& s = skeleton.steps[k];
    if (s.op == StepOp::kRecompute) {
      for (ir::TensorId out : graph.node(s.id).outputs)
        if (mine(out) && !resident[static_cast<std::size_t>(pos[out])]) {
          resident[static_cast<std::size_t>(pos[out])] = 1;
          ++held;
        }
    } else if (s.op == StepOp::kFree && mine(s.id)) {
      resident[static_cast<std::size_t>(pos[s.id])] = 0;
      --held;
    }
  }
  return slots;
}

void add_split(std::vector<std::vector<ir::NodeId>>& splits, ir::TensorId t, ir::NodeId turn) {
  if (splits.size() <= t) splits.resize(t + 1);
  splits[t].push_back(turn);
}

// Positions are 1-based (y_k = run.tensors[k - 1]); y_b is resident.
// Reverses y_{b+1..e} from `turn` on with c slots.
void emit(const RemakeRun& run, const ChainReversal& table, std::size_t b, std::size_t e,
          std::size_t c, ir::NodeId turn, std::vector<std::vector<ir::NodeId>>& splits) {
  while (e > b) {
    const std::size_t m = table.checkpoint(e - b, c);
    for (std::size_t k = b + 1; k <= b + m; ++k) add_split(splits, run.tensors[k - 1], turn);
    emit(run, table, b + m, e, c - 1, turn, splits);
    e = b + m - 1;
    if (e > b) turn = run.need[e - 1];
  }
}

}  // namespace

std::vector<RemakeRun> find_remake_runs(const ir::Graph& graph, const ReloadPlan& plan) {
  std::vector<Member> members(plan.tensors.size());
  for (ir::TensorId t = 0; t < members.size(); ++t)
    members[t] = describe(graph, plan.tensors[t], t);
  link(graph, plan, members);
  std::vector<RemakeRun> runs;
  for (ir::TensorId t = 0; t < members.size(); ++t) {
    const Member& m = members[t];
    if (!m.ok || m.joined || m.pred != ir::kNoTensor) continue;
    RemakeRun run = follow(graph, members, t);
    if (!run.tensors.empty()) runs.push_back(std::move(run));
  }
  return runs;
}

std::vector<char> remake_run_tensors(std::size_t tensor_count, std::span<const RemakeRun> runs) {
  std::vector<char> mine(tensor_count, 0);
  for (const RemakeRun& run : runs)
    for (ir::TensorId t : run.tensors) mine[t] = 1;
  return mine;
}

bool nest_over_budget(const Skeleton& skeleton, const Placed& placed, std::uint64_t budget_bytes,
                      const ir::Graph& graph, std::vector<RemakeRun>& runs,
                      std::vector<std::vector<ir::NodeId>>& splits) {
  const std::vector<std::int32_t> pos = positions(graph.tensors().size(), runs);
  bool changed = false;
  for (RemakeRun& run : runs) {
    const std::int64_t within = slots_within(skeleton, placed, budget_bytes, graph, run, pos);
    if (within == std::numeric_limits<std::int64_t>::max()) continue;
    const std::size_t n = run.tensors.size();
    std::int64_t slots = run.slots == 0 ? static_cast<std::int64_t>(n) - 1
                                        : static_cast<std::int64_t>(run.slots) - 1;
    slots = std::max<std::int64_t>(std::min(slots, within), 2);
    if (run.slots != 0 && static_cast<std::size_t>(slots) >= run.slots) continue;
    run.slots = static_cast<std::size_t>(slots);
    for (ir::TensorId t : run.tensors)
      if (t < splits.size()) splits[t].clear();
    const ChainReversal table(n, run.slots);
    emit(run, table, 0, n, run.slots, run.need.back(), splits);
    changed = true;
  }
  return changed;
}

}  // namespace memplan::planner::detail
