#include "runtime-stub/executor.h"

#include <algorithm>
#include <array>
#include <optional>

#include "ir/in_place_writes.h"
#include "planner/residency.h"
#include "runtime-stub/pattern.h"
#include "util/errors.h"

namespace memplan::runtime {
namespace {

using planner::StepOp;

std::size_t index_of(Stream s) { return static_cast<std::size_t>(s); }

double transfer_seconds(std::uint64_t bytes, double bytes_per_s) {
  return bytes == 0 || bytes_per_s <= 0 ? 0.0 : static_cast<double>(bytes) / bytes_per_s;
}

// Replays the schedule once, keeping what the waits and ranges need.
class Builder {
 public:
  Builder(const ir::Graph& graph, const planner::Plan& plan, const planner::MemoryLayout& layout,
          double time_scale)
      : graph_(graph),
        plan_(plan),
        layout_(layout),
        residency_(graph, plan),
        location_(graph.tensors().size()),
        made_(graph.tensors().size()),
        swapped_out_(graph.tensors().size()),
        host_slot_(graph.tensors().size()),
        writes_(graph.tensors().size(), 0) {
    out_.program.time_scale = time_scale;
    out_.program.arena_bytes = layout.arena_bytes;
  }

  BuiltProgram build() {
    // Offloaded state's values start in its host slot, where its swap_in
    // finds them; it gets no allocation at step -1.
    for (ir::TensorId t : plan_.initial_host)
      if (t < graph_.tensors().size() && bytes_of(t) > 0)
        out_.program.initial_host.push_back(host_range(t));
    while (next_alloc_ < layout_.allocations.size() && layout_.allocations[next_alloc_].step < 0) {
      const planner::Allocation& a = layout_.allocations[next_alloc_++];
      place(a);
      if (a.bytes > 0) out_.program.initial.push_back(range(a.tensor));
    }
    for (std::size_t i = 0; i < plan_.schedule.size(); ++i) step(static_cast<std::uint32_t>(i));
    finish();
    return std::move(out_);
  }

 private:
  std::uint64_t bytes_of(ir::TensorId t) const {
    return t < plan_.tensor_bytes.size() ? plan_.tensor_bytes[t] : 0;
  }
  // The pattern t holds now: its name's, moved on by each in-place write.
  std::uint64_t seed(ir::TensorId t) const {
    return written_seed(pattern_seed(graph_.tensor(t).name), writes_[t]);
  }
  TensorRange range(ir::TensorId t) const { return {*location_[t], bytes_of(t), seed(t), 0}; }
  TensorRange host_range(ir::TensorId t) { return {host_slot(t), bytes_of(t), seed(t), 0}; }
  // Whether base tensor t holds device memory now: resident (as Residency
  // says before it applies the current step) at a place the layout gave.
  bool placed(ir::TensorId t) const {
    return residency_.storage_resident(t) && location_[t].has_value();
  }
  void place(const planner::Allocation& a) { location_[a.tensor] = a.offset; }
  TensorRange read(ir::TensorId t, std::int64_t step) {
    TensorRange r = range(t);
    r.check = out_.program.check_count++;
    out_.sites.push_back({step, t, false});
    return r;
  }
  void static_error(std::uint32_t step, ir::TensorId t, const std::string& what) {
    out_.static_errors.push_back("step " + std::to_string(step) + ": '" + graph_.tensor(t).name +
                                 "' " + what);
  }
  // Appends `op` to `stream`, keeping of its waits only the latest on each
  // other stream (streams are in order, so it implies the earlier ones),
  // and marking what they wait for.
  Wait push(Stream stream, Op op) {
    auto& ops = out_.program.streams[index_of(stream)];
    std::array<std::optional<std::uint32_t>, kStreamCount> latest;
    for (const Wait& w : op.waits)
      if (w.stream != stream) {
        auto& l = latest[index_of(w.stream)];
        l = std::max(l.value_or(0), w.index);
      }
    op.waits.clear();
    for (std::size_t s = 0; s < kStreamCount; ++s)
      if (latest[s]) {
        op.waits.push_back({static_cast<Stream>(s), *latest[s]});
        awaited_[s].push_back(*latest[s]);
      }
    ops.push_back(std::move(op));
    return {stream, static_cast<std::uint32_t>(ops.size() - 1)};
  }
  std::uint64_t host_slot(ir::TensorId t) {
    if (!host_slot_[t]) {
      host_slot_[t] = out_.program.host_pool_bytes;
      const std::uint64_t a = planner::MemoryLayout::kDefaultAlignment;
      out_.program.host_pool_bytes += (bytes_of(t) + a - 1) / a * a;
    }
    return *host_slot_[t];
  }

  void step(std::uint32_t i) {
    const planner::Step& s = plan_.schedule[i];
    if (s.on_node()) {
      if (s.id < graph_.nodes().size()) compute(i, s);
    } else if (s.id < graph_.tensors().size()) {
      const ir::TensorId t = residency_.base(s.id);
      if (s.op == StepOp::kSwapOut) swap_out(i, t);
      if (s.op == StepOp::kSwapIn) swap_in(i, t);
      if (s.op == StepOp::kFree) free(i, t);
    }
    residency_.apply(s);
  }

  void compute(std::uint32_t i, const planner::Step& s) {
    const ir::Node& node = graph_.node(s.id);
    Op op;
    op.kind = OpKind::kCompute;
    op.step = i;
    op.seconds = s.id < plan_.node_seconds.size() ? plan_.node_seconds[s.id] : 0;
    std::vector<ir::TensorId> seen;
    for (ir::TensorId in : node.inputs) {
      const ir::TensorId t = residency_.base(in);
      if (std::find(seen.begin(), seen.end(), t) != seen.end()) continue;
      seen.push_back(t);
      if (made_[t]) op.waits.push_back(*made_[t]);
      if (bytes_of(t) == 0) continue;
      // A tensor that is not resident is still read where it last was: the
      // run, not the builder, finds out what is there.
      if (location_[t]) {
        op.reads.push_back(read(t, i));
      } else {
        static_error(i, t, "is read but was never made resident");
      }
    }
    const auto first = next_alloc_;
    while (next_alloc_ < layout_.allocations.size() && layout_.allocations[next_alloc_].step == i)
      place(layout_.allocations[next_alloc_++]);
    const Wait at{Stream::kCompute, static_cast<std::uint32_t>(out_.program.streams[0].size())};
    for (auto a = first; a < next_alloc_; ++a) {
      const ir::TensorId t = layout_.allocations[a].tensor;
      made_[t] = at;
      if (bytes_of(t) > 0) op.writes.push_back(range(t));
    }
    write_in_place(node, at, op);
    push(Stream::kCompute, std::move(op));
  }

  // The inputs `node` writes in place get new values (after the reads,
  // which see the old ones), so a host copy made before is caught as stale.
  // A later swap_out waits for the write (see build_program's comment).
  void write_in_place(const ir::Node& node, const Wait& at, Op& op) {
    for (ir::TensorId w : ir::in_place_writes(node)) {
      const ir::TensorId t = residency_.base(w);
      ++writes_[t];
      made_[t] = at;
      if (placed(t) && bytes_of(t) > 0) op.writes.push_back(range(t));
    }
  }

  void swap_out(std::uint32_t i, ir::TensorId t) {
    if (!location_[t]) {
      static_error(i, t, "is swapped out but was never made resident");
      return;
    }
    Op op;
    op.kind = OpKind::kCopyOut;
    op.step = i;
    op.seconds = transfer_seconds(bytes_of(t), plan_.device.d2h_bytes_per_s);
    if (made_[t]) op.waits.push_back(*made_[t]);
    op.device = range(t);  // a stale range if t was freed: the host gets poison
    op.host_offset = host_slot(t);
    swapped_out_[t] = push(Stream::kD2H, std::move(op));
  }

  void swap_in(std::uint32_t i, ir::TensorId t) {
    if (next_alloc_ >= layout_.allocations.size() || layout_.allocations[next_alloc_].step != i)
      return;  // nothing made resident (already resident, or no host copy)
    const planner::Allocation& a = layout_.allocations[next_alloc_++];
    place(a);
    Op op;
    op.kind = OpKind::kCopyIn;
    op.step = i;
    op.seconds = transfer_seconds(bytes_of(t), plan_.device.h2d_bytes_per_s);
    if (last_free_) op.waits.push_back(*last_free_);
    op.device = range(t);
    op.host_offset = host_slot(t);
    made_[t] = push(Stream::kH2D, std::move(op));
  }

  void free(std::uint32_t i, ir::TensorId t) {
    Op op;
    op.kind = OpKind::kFree;
    op.step = i;
    if (swapped_out_[t]) op.waits.push_back(*swapped_out_[t]);
    if (made_[t]) op.waits.push_back(*made_[t]);  // see build_program's comment
    if (placed(t) && bytes_of(t) > 0) op.writes.push_back(range(t));
    last_free_ = push(Stream::kCompute, std::move(op));
  }

  // The next iteration starts from the host copies of the initial_host
  // tensors: each must hold the values of the last write.
  void finish_initial_host(std::int64_t end) {
    for (ir::TensorId t : plan_.initial_host) {
      if (t >= graph_.tensors().size()) continue;
      if (residency_.storage_resident(t))
        out_.static_errors.push_back("end: initial_host tensor '" + graph_.tensor(t).name +
                                     "' is resident");
      if (bytes_of(t) == 0) continue;
      TensorRange r = host_range(t);
      r.check = out_.program.check_count++;
      out_.sites.push_back({end, t, true});
      out_.program.final_host_reads.push_back(r);
    }
  }

  void finish() {
    const auto end = static_cast<std::int64_t>(plan_.schedule.size());
    for (ir::TensorId t = 0; t < graph_.tensors().size(); ++t) {
      if (!residency_.is_alias(t) && placed(t) && bytes_of(t) > 0)
        out_.program.final_reads.push_back(read(t, end));
      const ir::Tensor& tensor = graph_.tensor(t);
      if (tensor.is_graph_output && !residency_.resident(t))
        out_.static_errors.push_back("end: graph output '" + tensor.name + "' is not resident");
    }
    finish_initial_host(end);
    for (std::size_t s = 0; s < kStreamCount; ++s) {
      auto& flags = out_.program.awaited[s];
      flags.assign(out_.program.streams[s].size(), false);
      for (std::uint32_t index : awaited_[s]) flags[index] = true;
    }
  }

  const ir::Graph& graph_;
  const planner::Plan& plan_;
  const planner::MemoryLayout& layout_;
  planner::Residency residency_;                        // aliases, and the end state
  std::vector<std::optional<std::uint64_t>> location_;  // last offset of each base tensor
  std::vector<std::optional<Wait>> made_;               // op that last made or wrote it
  std::vector<std::optional<Wait>> swapped_out_;        // its latest swap_out
  std::vector<std::optional<std::uint64_t>> host_slot_;
  std::vector<std::uint64_t> writes_;  // in-place writes so far, by base id
  std::optional<Wait> last_free_;
  std::array<std::vector<std::uint32_t>, kStreamCount> awaited_;
  std::size_t next_alloc_ = 0;
  BuiltProgram out_;
};

}  // namespace

std::uint64_t RunReport::measured_bytes() const {
  if (memory.device_arena_bytes) return *memory.device_arena_bytes;
  return touched_bytes ? *touched_bytes : memory.allocated_bytes;
}

const char* RunReport::measured_bytes_source() const {
  if (memory.device_arena_bytes) return "device_arena_bytes";
  return touched_bytes ? "touched_bytes" : "allocated_bytes";
}

double RunReport::fragmentation() const {
  return planned_peak_bytes == 0
             ? 1.0
             : static_cast<double>(measured_bytes()) / static_cast<double>(planned_peak_bytes);
}

BuiltProgram build_program(const ir::Graph& graph, const planner::Plan& plan,
                           const planner::MemoryLayout& layout, double time_scale) {
  return Builder(graph, plan, layout, time_scale).build();
}

RunReport run_plan(const ir::Graph& graph, const planner::Plan& plan,
                   const planner::MemoryLayout& layout, Backend& backend,
                   const RunOptions& options) {
  if (options.iterations < 1) throw UsageError("run: iterations must be >= 1");
  if (std::string why = planner::memory_layout_problem(graph, plan, layout); !why.empty())
    throw InvalidPlanError(why);
  BuiltProgram built = build_program(graph, plan, layout, 1.0);
  Program& program = built.program;
  program.time_scale =
      options.time_scale ? *options.time_scale : backend.default_time_scale(program);
  if (!(program.time_scale >= 0)) throw UsageError("run: the time scale must be >= 0");
  program.poison_frees = options.poison_frees;
  backend.prepare(program);

  RunReport report;
  report.backend = backend.name();
  report.time_scale = program.time_scale;
  report.poison_frees = program.poison_frees;
  report.host_pool_bytes = program.host_pool_bytes;
  report.budget_bytes = plan.budget_bytes;
  report.layout_arena_bytes = layout.arena_bytes;
  report.planned_peak_bytes = plan.predicted.peak_bytes;
  report.predicted_seconds = plan.predicted.iteration_seconds * program.time_scale;
  report.checks = program.check_count;

  std::vector<std::uint8_t> worst(program.check_count, 0);
  std::vector<std::optional<std::array<double, kStreamCount>>> overruns;
  for (int it = 0; it < options.iterations; ++it) {
    Measurement m = backend.run(program);
    report.measured_seconds.push_back(m.seconds);
    overruns.push_back(m.overrun_seconds);
    if (m.touched_bytes)
      report.touched_bytes = std::max(report.touched_bytes.value_or(0), *m.touched_bytes);
    for (std::size_t c = 0; c < worst.size() && c < m.outcomes.size(); ++c)
      worst[c] = std::max(worst[c], m.outcomes[c]);
  }
  std::vector<std::size_t> order(report.measured_seconds.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return report.measured_seconds[a] < report.measured_seconds[b];
  });
  // After the runs: a backend may see allocations the driver made lazily.
  report.memory = backend.memory();
  const std::size_t median = order[order.size() / 2];
  report.measured_median = report.measured_seconds[median];
  report.overrun_seconds = overruns[median];

  for (const std::string& e : built.static_errors) {
    ++report.static_errors;
    if (report.first_errors.size() < RunReport::kMaxListed)
      report.first_errors.push_back({-1, "", e});
  }
  for (std::size_t c = 0; c < worst.size(); ++c) {
    const auto outcome = static_cast<CheckOutcome>(worst[c]);
    if (outcome == CheckOutcome::kOk) continue;
    const bool freed = outcome == CheckOutcome::kFreedMemory;
    ++(freed ? report.freed_reads : report.wrong_bytes);
    const CheckSite& site = built.sites[c];
    if (report.first_errors.size() < RunReport::kMaxListed)
      report.first_errors.push_back({site.step, graph.tensor(site.tensor).name,
                                     std::string(freed ? "freed memory" : "wrong bytes") +
                                         (site.host ? " (host copy)" : "")});
  }
  return report;
}

}  // namespace memplan::runtime
