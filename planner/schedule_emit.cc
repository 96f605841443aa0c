#include "planner/schedule_emit.h"

#include <algorithm>
#include <functional>
#include <queue>
#include <stdexcept>
#include <string>
#include <utility>

#include "ir/in_place_writes.h"
#include "ir/memory_tracker.h"

namespace memplan::planner::detail {
namespace {

// Transfer time for the estimates only; an unknown bandwidth estimates as
// free rather than poisoning the clock with infinities.
double estimate_transfer(std::uint64_t bytes, double bytes_per_s) {
  return bytes_per_s > 0 ? static_cast<double>(bytes) / bytes_per_s : 0.0;
}

class Emitter {
 public:
  Emitter(const ir::Graph& graph, const ir::NodeCosts& costs, const ReloadPlan& plan,
          const EmitOptions& options)
      : graph_(graph),
        costs_(costs),
        plan_(plan),
        options_(options),
        memory_(ir::MemoryTracker::at_start(graph)) {
    const std::size_t n = graph.tensors().size();
    open_.assign(n, 0);
    pending_.assign(n, 0);
    rem_.assign(n, 0);
    next_seg_.assign(n, 0);
    last_free_.assign(n, -1);
    swap_out_end_.assign(n, 0.0);
    stale_.assign(n, 0);
    writer_.assign(n, ir::kNoNode);
    written_at_.assign(n, -1);
    last_writer_.assign(n, ir::kNoNode);
    for (ir::NodeId k = 0; k < graph.nodes().size(); ++k)
      for (ir::TensorId t : ir::in_place_writes(graph.node(k))) last_writer_[t] = k;
  }

  Skeleton run() {
    const auto node_count = static_cast<ir::NodeId>(graph_.nodes().size());
    out_.steps.reserve(2 * node_count + graph_.tensors().size());
    release_state();
    for (ir::NodeId n = 0; n < node_count; ++n) {
      turn_ = n;
      for (ir::TensorId t : plan_.reloads_before[n]) reload(t, n);
      compute(n);
    }
    while (!deferred_.empty()) {
      const ir::TensorId t = deferred_.top().second;
      deferred_.pop();
      if (pending_[t]) free_now(t);
    }
    out_.level.push_back(memory_.bytes_in_use());
    out_.clock.push_back(now_);
    out_.computes.push_back(computes_);
    if (std::string why = memory_.check(); !why.empty()) bug(why);
    return std::move(out_);
  }

 private:
  std::uint64_t bytes(ir::TensorId t) const { return graph_.tensor(t).bytes; }
  double seconds(ir::NodeId n) const { return n < costs_.seconds.size() ? costs_.seconds[n] : 0; }

  [[noreturn]] void bug(const std::string& what) const {
    throw std::logic_error("scheduler: " + what);
  }

  // Records the slot before the step, then the step itself.
  void push(StepOp op, std::uint32_t id) {
    out_.level.push_back(memory_.bytes_in_use());
    out_.clock.push_back(now_);
    out_.computes.push_back(computes_);
    out_.steps.push_back({op, id});
    out_.turn.push_back(turn_);
  }

  void open_segment(ir::TensorId t) {
    const TensorPlan& p = plan_.tensors[t];
    if (next_seg_[t] >= p.segment_begin.size()) bug("no segment left for " + graph_.tensor(t).name);
    rem_[t] = segment_size(p, next_seg_[t]);
    ++next_seg_[t];
    open_[t] = 1;
  }

  // Whether t's next segment is reloaded in the turn of node n.
  bool reload_due(ir::TensorId t, ir::NodeId n) const {
    const TensorPlan& p = plan_.tensors[t];
    const std::uint32_t k = next_seg_[t];
    return k >= 1 && k < p.segment_begin.size() && p.reload_turn[k] == n;
  }

  // Swapped training state (TensorPlan::state) starts resident: each copy
  // out is issued before the first step, in the order the copies are
  // needed (state no forward node reads first, then by last forward reader),
  // and segment 0 opens at once; state that no forward node reads leaves as
  // soon as its copy is done.
  void release_state() {
    std::vector<ir::TensorId> state;
    for (ir::TensorId t = 0; t < plan_.tensors.size(); ++t) {
      if (plan_.tensors[t].state) state.push_back(t);
      // Kept on the host between iterations: it starts there, so no step
      // releases it; its first reload opens segment 1.
      if (plan_.tensors[t].on_host) {
        memory_.release(t);
        next_seg_[t] = 1;
      }
    }
    auto freed_after = [&](ir::TensorId t) {
      const ir::NodeId e = plan_.tensors[t].evict_after;
      return e == ir::kNoNode ? std::int64_t{-1} : std::int64_t{e};
    };
    std::stable_sort(state.begin(), state.end(), [&](ir::TensorId a, ir::TensorId b) {
      return freed_after(a) < freed_after(b);
    });
    for (ir::TensorId t : state) {
      push(StepOp::kSwapOut, t);
      d2h_end_ += estimate_transfer(bytes(t), costs_.device.d2h_bytes_per_s);
      swap_out_end_[t] = d2h_end_;
      open_segment(t);
      if (rem_[t] != 0) continue;
      open_[t] = 0;
      closing_.push_back(t);
    }
    free_all(closing_);
  }

  // One read of t by the step just issued; t joins `closing` on its last,
  // unless it is state in its last segment (resident at the end).
  void read(ir::TensorId t, std::vector<ir::TensorId>& closing) {
    const TensorPlan& p = plan_.tensors[t];
    if (p.pinned) return;
    if (!open_[t] || rem_[t] == 0) bug("read of '" + graph_.tensor(t).name + "' outside a segment");
    if (--rem_[t] == 0) {
      open_[t] = 0;
      if (!p.state || next_seg_[t] < p.segment_begin.size()) closing.push_back(t);
    }
  }

  void free_now(ir::TensorId t) {
    pending_[t] = 0;
    // PLAN_FORMAT: a free waits for every earlier swap_out of its tensor.
    now_ = std::max(now_, swap_out_end_[t]);
    last_free_[t] = static_cast<std::int64_t>(out_.steps.size());
    push(StepOp::kFree, t);
    memory_.release(t);
  }

  // A node wrote t in place since its last copy out (ir/in_place_writes.h),
  // and the device copy is leaving while a later segment, or the next
  // iteration (TensorPlan::on_host), reads it from the host: copy it out
  // again first.
  void copy_out_if_stale(ir::TensorId t) {
    const TensorPlan& p = plan_.tensors[t];
    if (!stale_[t] || (!p.on_host && next_seg_[t] >= p.segment_begin.size())) return;
    stale_[t] = 0;
    fence_write(t);
    push(StepOp::kSwapOut, t);
    d2h_end_ =
        std::max(d2h_end_, now_) + estimate_transfer(bytes(t), costs_.device.d2h_bytes_per_s);
    swap_out_end_[t] = d2h_end_;
  }

  // PLAN_FORMAT times a swap_out from the step that last made its tensor
  // resident, not from an in-place write since, so a copy of a written
  // tensor could start before the write ends and take stale values. A
  // copy out of the writer's smallest resident output first holds the
  // in-order d2h stream until the write is done, which is what a runtime
  // must do anyway (docs/model.md §State on the host, "A write fence").
  // One fence covers every write up to its writer's step: each copy out
  // issued after it waits for it.
  void fence_write(ir::TensorId t) {
    if (writer_[t] == ir::kNoNode || fenced_through_ >= written_at_[t]) return;
    ir::TensorId fence = ir::kNoTensor;
    for (ir::TensorId out : graph_.node(writer_[t]).outputs)
      if (out != t && memory_.resident(out) &&
          (fence == ir::kNoTensor || bytes(out) < bytes(fence)))
        fence = out;
    if (fence == ir::kNoTensor) return;
    fenced_through_ = written_at_[t];
    push(StepOp::kSwapOut, fence);
    d2h_end_ =
        std::max(d2h_end_, now_) + estimate_transfer(bytes(fence), costs_.device.d2h_bytes_per_s);
  }

  // State kept on the host between iterations is copied out right after
  // its last write rather than when it is freed: a gradient buffer that
  // the optimizer step reads later leaves during the backward, where the
  // d2h link is idle, instead of queueing with the optimizer's copies
  // (gpt2_xl + AdamW v100-16gb, batch 8: +73.93 % with the copy at the free).
  void copy_out_after_last_write(ir::NodeId n) {
    for (ir::TensorId t : ir::in_place_writes(graph_.node(n)))
      if (plan_.tensors[t].on_host && last_writer_[t] == n) copy_out_if_stale(t);
  }

  void mark_written(ir::NodeId n) {
    for (ir::TensorId t : ir::in_place_writes(graph_.node(n))) {
      stale_[t] = 1;
      writer_[t] = n;
      written_at_[t] = static_cast<std::int64_t>(out_.steps.size()) - 1;
    }
  }

  // Frees in ascending id (as the baseline does); a swapped tensor whose
  // copy is still running waits in `deferred_` instead of stalling.
  void free_all(std::vector<ir::TensorId>& ts) {
    std::sort(ts.begin(), ts.end());
    for (ir::TensorId t : ts) {
      copy_out_if_stale(t);
      if (options_.defer_swap_frees && swap_out_end_[t] > now_) {
        pending_[t] = 1;
        deferred_.push({swap_out_end_[t], t});
      } else {
        free_now(t);
      }
    }
    ts.clear();
    while (!deferred_.empty() && deferred_.top().first <= now_) {
      const ir::TensorId t = deferred_.top().second;
      deferred_.pop();
      if (pending_[t]) free_now(t);
    }
  }

  // Issues deferred frees, earliest copy first, until `more` bytes fit.
  void make_room(std::uint64_t more) {
    while (!deferred_.empty() && !memory_.fits(more, options_.budget_bytes)) {
      const ir::TensorId t = deferred_.top().second;
      deferred_.pop();
      if (pending_[t]) free_now(t);
    }
  }

  const std::vector<ir::TensorId>& distinct_inputs(ir::NodeId n) {
    inputs_ = graph_.node(n).inputs;
    std::sort(inputs_.begin(), inputs_.end());
    inputs_.erase(std::unique(inputs_.begin(), inputs_.end()), inputs_.end());
    for (ir::TensorId t : inputs_)
      if (!memory_.resident(t))
        bug("input '" + graph_.tensor(t).name + "' of '" + graph_.node(n).name + "' not resident");
    return inputs_;
  }

  void reload(ir::TensorId t, ir::NodeId turn) {
    if (open_[t]) return;  // a sibling's recompute in this turn made it
    // Its free still waits for the copy out: the tensor never left, so the
    // free is dropped rather than issued (stalling on the copy) only to
    // bring the same bytes straight back.
    if (pending_[t]) {
      pending_[t] = 0;
      open_segment(t);
      return;
    }
    if (memory_.resident(t)) bug("reload of resident '" + graph_.tensor(t).name + "'");
    if (plan_.tensors[t].reload == Decision::kSwap) {
      make_room(bytes(t));
      const auto slot = static_cast<std::uint32_t>(out_.steps.size());
      out_.swap_ins.push_back({t, slot, static_cast<std::uint32_t>(last_free_[t] + 1)});
      memory_.allocate(t);
      open_segment(t);
    } else {
      recompute(graph_.tensor(t).producer, turn);
    }
  }

  void recompute(ir::NodeId n, ir::NodeId turn) {
    const ir::Node& node = graph_.node(n);
    std::uint64_t more = 0;
    for (ir::TensorId out : node.outputs)
      if (!memory_.resident(out)) more += bytes(out);
    make_room(more);
    const auto& inputs = distinct_inputs(n);
    push(StepOp::kRecompute, n);
    ++computes_;
    now_ += seconds(n);
    mark_written(n);
    for (ir::TensorId out : node.outputs) {
      if (!memory_.allocate(out)) continue;
      // An output nobody reloads in this turn was made only because a
      // recompute makes all its outputs: release it at once.
      if (reload_due(out, turn)) {
        open_segment(out);
      } else {
        closing_.push_back(out);
      }
    }
    for (ir::TensorId in : inputs) read(in, closing_);
    free_all(closing_);
  }

  void compute(ir::NodeId n) {
    const ir::Node& node = graph_.node(n);
    std::uint64_t more = 0;
    for (ir::TensorId out : node.outputs) more += bytes(out);
    make_room(more);
    const auto& inputs = distinct_inputs(n);
    push(StepOp::kCompute, n);
    ++computes_;
    now_ += seconds(n);
    mark_written(n);
    for (ir::TensorId out : node.outputs) {
      if (!memory_.allocate(out)) bug("output '" + graph_.tensor(out).name + "' made twice");
      if (!plan_.tensors[out].pinned) open_segment(out);
    }
    for (ir::TensorId out : node.outputs) {
      if (plan_.tensors[out].reload != Decision::kSwap) continue;
      push(StepOp::kSwapOut, out);
      // The d2h stream is in order and starts a copy once its tensor exists.
      d2h_end_ =
          std::max(d2h_end_, now_) + estimate_transfer(bytes(out), costs_.device.d2h_bytes_per_s);
      swap_out_end_[out] = d2h_end_;
    }
    copy_out_after_last_write(n);
    for (ir::TensorId in : inputs) read(in, closing_);
    for (ir::TensorId out : node.outputs) {
      if (plan_.tensors[out].pinned || rem_[out] != 0 || !open_[out]) continue;
      open_[out] = 0;  // nothing reads it in its first segment
      closing_.push_back(out);
    }
    free_all(closing_);
  }

  const ir::Graph& graph_;
  const ir::NodeCosts& costs_;
  const ReloadPlan& plan_;
  const EmitOptions& options_;
  Skeleton out_;
  ir::MemoryTracker memory_;
  std::vector<char> open_, pending_;
  std::vector<char> stale_;               // written in place since its last copy out
  std::vector<ir::NodeId> writer_;        // its last in-place writer
  std::vector<std::int64_t> written_at_;  // that writer's step
  std::vector<ir::NodeId> last_writer_;   // the graph's last in-place writer
  std::int64_t fenced_through_ = -1;      // the latest step a fence waits for
  std::vector<std::uint32_t> rem_, next_seg_;
  std::vector<std::int64_t> last_free_;
  std::vector<double> swap_out_end_;
  using Deferred = std::pair<double, ir::TensorId>;
  std::priority_queue<Deferred, std::vector<Deferred>, std::greater<>> deferred_;
  std::vector<ir::TensorId> inputs_, closing_;
  double now_ = 0;
  double d2h_end_ = 0;
  std::uint32_t computes_ = 0;
  ir::NodeId turn_ = 0;
};

}  // namespace

Skeleton emit_skeleton(const ir::Graph& graph, const ir::NodeCosts& costs, const ReloadPlan& plan,
                       const EmitOptions& options) {
  return Emitter(graph, costs, plan, options).run();
}

}  // namespace memplan::planner::detail
