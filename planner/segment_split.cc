#include "planner/segment_split.h"

#include <algorithm>
#include <limits>

#include "solvers/range_max_tree.h"

namespace memplan::planner::detail {
namespace {

// A tensor held between two reads of one reload segment.
struct Gap {
  std::uint64_t bytes;
  double seconds;  // what reloading it once more costs (ReloadCost)
  ir::TensorId tensor;
  ir::NodeId prev;  // turn of the read before
  ir::NodeId next;  // turn of the read after: the new segment starts there
};

// The time one more reload of a tensor costs: its copy in, or its
// producer's run plus the reloads of the evicted inputs that run reads
// (split_at reruns the chain in full). Memoised, and walked with a stack of
// its own: a chain of remakes can be as long as the graph.
class ReloadCost {
 public:
  ReloadCost(const ir::Graph& graph, const ir::NodeCosts& costs, const ReloadPlan& plan)
      : graph_(graph), costs_(costs), plan_(plan), memo_(plan.tensors.size(), kUnknown) {}

  double operator()(ir::TensorId t) {
    stack_.assign(1, t);
    while (!stack_.empty()) {
      const ir::TensorId x = stack_.back();
      if (memo_[x] != kUnknown) {
        stack_.pop_back();
        continue;
      }
      const std::size_t before = stack_.size();
      push_unknown_inputs(x);
      if (stack_.size() > before) continue;  // its inputs first
      memo_[x] = own(x);
      stack_.pop_back();
    }
    return memo_[t];
  }

 private:
  static constexpr double kUnknown = -1.0;

  bool recomputed(ir::TensorId t) const { return plan_.tensors[t].reload == Decision::kRecompute; }

  // The evicted inputs of a recomputed tensor's producer not priced yet.
  // One already lower on the stack goes on again, above its reader, so it
  // is priced first; the graph is a DAG, so each tensor goes on at most
  // once per reader.
  void push_unknown_inputs(ir::TensorId t) {
    if (!recomputed(t)) return;
    for (ir::TensorId in : graph_.node(graph_.tensor(t).producer).inputs)
      if (plan_.tensors[in].reload != Decision::kKeep && memo_[in] == kUnknown)
        stack_.push_back(in);
  }

  // With every evicted input priced.
  double own(ir::TensorId t) const {
    if (plan_.tensors[t].reload == Decision::kSwap) {
      const double bw = costs_.device.h2d_bytes_per_s;
      return bw > 0 ? static_cast<double>(graph_.tensor(t).bytes) / bw : 0;
    }
    if (!recomputed(t)) return 0;
    const ir::NodeId n = graph_.tensor(t).producer;
    double s = n < costs_.seconds.size() ? costs_.seconds[n] : 0;
    for (ir::TensorId in : graph_.node(n).inputs)
      if (plan_.tensors[in].reload != Decision::kKeep) s += memo_[in];
    return s;
  }

  const ir::Graph& graph_;
  const ir::NodeCosts& costs_;
  const ReloadPlan& plan_;
  std::vector<double> memo_;
  std::vector<ir::TensorId> stack_;
};

bool larger(const Gap& a, const Gap& b) {
  if (a.bytes != b.bytes) return a.bytes > b.bytes;
  if (a.tensor != b.tensor) return a.tensor < b.tensor;
  return a.next < b.next;
}

// A gap relieves its bytes for one more reload's time: of the gaps over
// one slot, those that free the most per second go first.
bool cheaper_per_byte(const Gap& a, const Gap& b) {
  const double ea = a.seconds * static_cast<double>(b.bytes);
  const double eb = b.seconds * static_cast<double>(a.bytes);
  if (ea != eb) return ea < eb;
  return larger(a, b);
}

// Every pair of consecutive reads of a reload segment with turns between
// them, sorted in `order`.
std::vector<Gap> held_gaps(const ir::Graph& graph, const ir::NodeCosts& costs,
                           const ReloadPlan& plan, std::span<const char> owned, SplitOrder order) {
  std::vector<Gap> gaps;
  ReloadCost reload_cost(graph, costs, plan);
  for (ir::TensorId t = 0; t < plan.tensors.size(); ++t) {
    const TensorPlan& p = plan.tensors[t];
    if (p.reload == Decision::kKeep || graph.tensor(t).bytes == 0) continue;
    if (t < owned.size() && owned[t]) continue;
    for (std::size_t k = 1; k < p.segment_begin.size(); ++k) {
      const std::size_t end =
          k + 1 < p.segment_begin.size() ? p.segment_begin[k + 1] : p.uses.size();
      for (std::size_t i = p.segment_begin[k] + 1; i < end; ++i)
        if (p.uses[i].node > p.uses[i - 1].node + 1)
          gaps.push_back({graph.tensor(t).bytes,
                          order == SplitOrder::kCheapest ? reload_cost(t) : 0.0, t,
                          p.uses[i - 1].node, p.uses[i].node});
    }
  }
  std::sort(gaps.begin(), gaps.end(), order == SplitOrder::kCheapest ? cheaper_per_byte : larger);
  return gaps;
}

}  // namespace

std::vector<Split> choose_splits(const ir::Graph& graph, const ir::NodeCosts& costs,
                                 const ReloadPlan& plan, const Skeleton& skeleton,
                                 const Placed& placed, std::uint64_t budget_bytes,
                                 std::span<const char> owned, SplitOrder order) {
  const auto budget = static_cast<std::int64_t>(
      std::min<std::uint64_t>(budget_bytes, std::numeric_limits<std::int64_t>::max()));
  if (skeleton.steps.empty() || std::none_of(placed.level.begin(), placed.level.end(),
                                             [&](std::int64_t v) { return v > budget; }))
    return {};
  std::vector<Gap> gaps = held_gaps(graph, costs, plan, owned, order);

  // Split, the tensor is gone from after the turn of its read before (its
  // free ends that turn at the latest) until the turn of its read after
  // (its reload opens that turn at the earliest): the slots from the first
  // step of turn prev + 1 up to the first step of turn next. The excess over
  // the budget is taken down by the bytes of each split, in order, while
  // some slot it spans is still over.
  std::vector<std::int64_t> excess(placed.level);
  for (std::int64_t& v : excess) v -= budget;
  solvers::RangeMaxTree over(excess);
  auto first_step = [&](ir::NodeId turn) {
    return static_cast<std::size_t>(
        std::lower_bound(skeleton.turn.begin(), skeleton.turn.end(), turn) - skeleton.turn.begin());
  };
  std::vector<Split> chosen;
  for (const Gap& g : gaps) {
    const std::size_t lo = first_step(g.prev + 1), hi = first_step(g.next);
    if (lo >= hi || over.max(lo, hi - 1) <= 0) continue;
    over.add(lo, hi - 1, -static_cast<std::int64_t>(g.bytes));
    chosen.push_back({g.tensor, g.next});
  }
  return chosen;
}

void apply_splits(const ir::Graph& graph, const ReloadPlan& plan, std::span<const Split> chosen,
                  std::vector<std::vector<ir::NodeId>>& splits) {
  std::vector<ir::TensorId> chain;
  for (const Split& s : chosen) {
    chain.assign(1, s.tensor);
    while (!chain.empty()) {
      const ir::TensorId x = chain.back();
      chain.pop_back();
      if (splits.size() <= x) splits.resize(x + 1);
      auto& mine = splits[x];
      if (std::find(mine.begin(), mine.end(), s.at) != mine.end()) continue;
      mine.push_back(s.at);
      if (plan.tensors[x].reload != Decision::kRecompute) continue;
      for (ir::TensorId in : graph.node(graph.tensor(x).producer).inputs)
        if (plan.tensors[in].reload != Decision::kKeep) chain.push_back(in);
    }
  }
}

}  // namespace memplan::planner::detail
