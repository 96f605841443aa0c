#include "planner/dtr_evictor.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <stdexcept>
#include <string>

#include "ir/liveness.h"
#include "ir/memory_tracker.h"

namespace memplan::planner {
namespace {

constexpr std::int64_t kForever = std::numeric_limits<std::int64_t>::max();
constexpr std::uint32_t kNotCandidate = std::numeric_limits<std::uint32_t>::max();

// One simulated run of the graph under the budget. Node k of the graph order
// is "step k"; every compute or recompute step advances the logical clock
// that staleness is measured on.
class Dtr {
 public:
  Dtr(const ir::Graph& g, const ir::NodeCosts& costs, std::uint64_t budget)
      : g_(g),
        seconds_(costs.seconds),
        budget_(budget),
        liveness_(g),
        memory_(ir::MemoryTracker::at_start(g)),
        locks_(g.tensors().size(), 0),
        last_access_(g.tensors().size(), 0),
        cand_pos_(g.tensors().size(), kNotCandidate),
        evictable_(g.tensors().size(), false) {
    if (seconds_.size() != g.nodes().size())
      throw std::invalid_argument("dtr: costs give " + std::to_string(seconds_.size()) +
                                  " node times for a graph of " + std::to_string(g.nodes().size()) +
                                  " nodes");
    result_.decisions.assign(g.tensors().size(), Decision::kKeep);
    classify();
  }

  DtrResult run() {
    for (ir::NodeId k = 0; k < g_.nodes().size(); ++k) {
      node_ = k;
      const ir::Node& node = g_.node(k);
      // Locked before anything is brought back, so making room for one
      // input's recompute can never evict another input already resident.
      for (ir::TensorId in : node.inputs) ++locks_[in];
      materialize(node.inputs);
      make_outputs(k, StepOp::kCompute);
      for (ir::TensorId in : node.inputs) --locks_[in];
      // The baseline's frees, in its order; an evicted tensor is already gone.
      for (ir::TensorId t : liveness_.freed_after(k))
        if (memory_.resident(t)) release(t);
    }
    if (std::string why = memory_.check(); !why.empty()) throw std::logic_error("dtr: " + why);
    result_.peak_bytes = memory_.peak_bytes();
    result_.fits = result_.peak_bytes <= budget_;
    return std::move(result_);
  }

 private:
  bool pinned(ir::TensorId t) const { return liveness_.pinned(t); }
  // No original reader remains at the current step: such a tensor is only
  // resident while a recompute chain needs it.
  bool dead(ir::TensorId t) const {
    return !pinned(t) && liveness_.free_step(t) < static_cast<std::int64_t>(node_);
  }

  // A dead tensor no open frame holds goes as soon as its chain is done;
  // a run that gave up keeps it (freeing and remaking is what thrashed).
  bool free_early(ir::TensorId t) const { return locks_[t] == 0 && dead(t) && !result_.gave_up; }

  // Which tensors may be evicted. Recomputing t needs its producer's inputs
  // at some step k <= t's last reader. An input i is there at k if k is no
  // later than its last reader and it was never evicted (pinned, random,
  // non-evictable: resident from its compute to its free), or if i can
  // itself be brought back at k. reach[t] is the last step at which t can
  // surely be brought back: the minimum over its producer's inputs of
  // max(reach[i], free_step[i]); for a random output, its free step (it can
  // never be recomputed). t is evictable only if reach[t] covers its own last
  // reader. By induction over the producers, every tensor a recompute chain
  // at step k needs is then resident or recomputable at k, so no chain ever
  // finds an input gone for good; a tensor downstream of a Dropout whose
  // output is freed early stays resident instead (DTR's "banishing").
  void classify() {
    std::vector<std::int64_t> reach(g_.tensors().size(), kForever);
    for (ir::NodeId n = 0; n < g_.nodes().size(); ++n) {
      const ir::Node& node = g_.node(n);
      std::int64_t inputs_reach = kForever;
      for (ir::TensorId in : node.inputs)
        inputs_reach = std::min(inputs_reach, std::max(reach[in], liveness_.free_step(in)));
      for (ir::TensorId out : node.outputs) {
        if (pinned(out)) continue;  // free_step is kNever: resident from its compute on
        reach[out] = node.is_random() ? liveness_.free_step(out) : inputs_reach;
        evictable_[out] =
            !node.is_random() && g_.tensor(out).bytes > 0 && reach[out] >= liveness_.free_step(out);
      }
    }
  }

  // Makes every tensor in `wanted` resident, recomputing what is gone; the
  // caller has locked them. Explicit stack: chains can be thousands of nodes
  // long. A frame is expanded once: it locks its producer's inputs (so a
  // deeper recompute cannot evict them), pushes the missing ones, and on its
  // second visit recomputes the producer.
  void materialize(const std::vector<ir::TensorId>& wanted) {
    struct Frame {
      ir::TensorId tensor;
      bool expanded;
    };
    std::vector<Frame> stack;
    for (auto it = wanted.rbegin(); it != wanted.rend(); ++it)
      if (!memory_.resident(*it)) stack.push_back({*it, false});
    while (!stack.empty()) {
      const Frame top = stack.back();
      const ir::NodeId producer = g_.tensor(top.tensor).producer;
      if (!top.expanded) {
        if (memory_.resident(top.tensor)) {
          stack.pop_back();
          continue;
        }
        if (producer == ir::kNoNode || producer >= node_ || g_.node(producer).is_random())
          throw std::logic_error("dtr: tensor '" + g_.tensor(top.tensor).name +
                                 "' is gone and cannot be recomputed");
        stack.back().expanded = true;
        const auto& inputs = g_.node(producer).inputs;
        for (ir::TensorId in : inputs) ++locks_[in];
        for (auto it = inputs.rbegin(); it != inputs.rend(); ++it)
          if (!memory_.resident(*it)) stack.push_back({*it, false});
        continue;
      }
      stack.pop_back();
      const auto& inputs = g_.node(producer).inputs;
      // A sibling's recompute may have made this tensor already.
      if (!memory_.resident(top.tensor)) {
        made_.clear();
        for (ir::TensorId out : g_.node(producer).outputs)
          if (!memory_.resident(out)) made_.push_back(out);
        make_outputs(producer, StepOp::kRecompute);
        for (ir::TensorId out : made_) {
          // Outputs no one will read again were made only because the format
          // makes all of them at once: drop them now, not counted as chosen.
          if (free_early(out))
            release(out);
          else
            result_.decisions[out] = Decision::kRecompute;
        }
      }
      for (ir::TensorId in : inputs) {
        --locks_[in];
        // A dead input brought back for this chain has served its purpose.
        if (free_early(in) && memory_.resident(in)) release(in);
      }
    }
  }

  // A compute or recompute step of n: room for its missing outputs first.
  void make_outputs(ir::NodeId n, StepOp op) {
    const ir::Node& node = g_.node(n);
    std::uint64_t need = 0;
    for (ir::TensorId out : node.outputs)
      if (!memory_.resident(out)) need += g_.tensor(out).bytes;
    make_room(need);
    result_.schedule.push_back({op, n});
    ++clock_;
    for (ir::TensorId in : node.inputs) last_access_[in] = clock_;
    for (ir::TensorId out : node.outputs) {
      if (!memory_.allocate(out)) continue;
      last_access_[out] = clock_;
      if (evictable_[out]) add_candidate(out);
    }
    if (op == StepOp::kRecompute) {
      ++result_.recomputes;
      result_.recompute_seconds += seconds_[n];
      if (result_.recomputes >= max_recomputes_) result_.gave_up = true;
    }
  }

  // Evicts the cheapest unlocked candidates until `need` more bytes fit; when
  // none is left, or the run gave up, the step runs over budget and the
  // result says it does not fit.
  void make_room(std::uint64_t need) {
    while (!result_.gave_up && over_budget(need)) {
      ir::TensorId best = ir::kNoTensor;
      double best_score = 0;
      for (ir::TensorId t : candidates_) {
        if (locks_[t] != 0) continue;
        const double s = score(t);
        // Ties: the larger tensor frees more per eviction; then the lower id,
        // so the result does not depend on the candidate list's order.
        if (best == ir::kNoTensor || s < best_score ||
            (s == best_score && (g_.tensor(t).bytes > g_.tensor(best).bytes ||
                                 (g_.tensor(t).bytes == g_.tensor(best).bytes && t < best)))) {
          best = t;
          best_score = s;
        }
      }
      if (best == ir::kNoTensor) return;
      release(best);
      ++result_.evictions;
    }
  }

  bool over_budget(std::uint64_t need) const { return !memory_.fits(need, budget_); }

  // DTR's h(t) = cost / (bytes x staleness), where cost is the producer's
  // time plus that of producers of its inputs that are gone now (a one-level
  // version of the paper's evicted neighbourhood e*: evicting t next to
  // evicted tensors makes a later recompute chain longer).
  double score(ir::TensorId t) const {
    const ir::NodeId p = g_.tensor(t).producer;
    double cost = seconds_[p];
    for (ir::TensorId in : g_.node(p).inputs)
      if (!memory_.resident(in)) cost += seconds_[g_.tensor(in).producer];
    const double staleness = static_cast<double>(clock_ - last_access_[t] + 1);
    return cost / (static_cast<double>(g_.tensor(t).bytes) * staleness);
  }

  void release(ir::TensorId t) {
    result_.schedule.push_back({StepOp::kFree, t});
    memory_.release(t);
    if (cand_pos_[t] != kNotCandidate) remove_candidate(t);
  }

  void add_candidate(ir::TensorId t) {
    cand_pos_[t] = static_cast<std::uint32_t>(candidates_.size());
    candidates_.push_back(t);
  }

  void remove_candidate(ir::TensorId t) {
    const std::uint32_t pos = cand_pos_[t];
    const ir::TensorId moved = candidates_.back();
    candidates_[pos] = moved;
    cand_pos_[moved] = pos;
    candidates_.pop_back();
    cand_pos_[t] = kNotCandidate;
  }

  const ir::Graph& g_;
  const std::vector<double>& seconds_;
  const std::uint64_t budget_;
  const ir::Liveness liveness_;
  ir::MemoryTracker memory_;
  std::vector<std::uint32_t> locks_;  // pending readers: the current node and open frames
  std::vector<std::uint64_t> last_access_;
  std::vector<std::uint32_t> cand_pos_;  // index into candidates_
  std::vector<bool> evictable_;
  // Resident evictable tensors: a few hundred even on the largest fixtures,
  // so a scan per eviction is cheaper than keeping scores ordered while
  // staleness changes them all on every step.
  std::vector<ir::TensorId> candidates_;
  std::vector<ir::TensorId> made_;  // scratch: outputs one recompute makes
  std::uint64_t clock_ = 0;
  ir::NodeId node_ = 0;
  DtrResult result_;
  const std::size_t max_recomputes_ =
      DtrResult::kMaxRecomputesPerNode * std::max<std::size_t>(1, g_.nodes().size());
};

}  // namespace

DtrResult dtr_schedule(const ir::Graph& graph, const ir::NodeCosts& costs,
                       std::uint64_t budget_bytes) {
  const auto start = std::chrono::steady_clock::now();
  DtrResult result = Dtr(graph, costs, budget_bytes).run();
  result.solve_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

std::string dtr_note(const DtrResult& r) {
  if (!r.gave_up) return {};
  return "DTR thrashed: it gave up after " + std::to_string(DtrResult::kMaxRecomputesPerNode) +
         " recomputes per node (" + std::to_string(r.recomputes) +
         " in all): it evicts no more, and the rest of its run keeps what it makes";
}

}  // namespace memplan::planner
