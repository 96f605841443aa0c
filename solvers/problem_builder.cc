#include "solvers/problem_builder.h"

#include <algorithm>
#include <limits>
#include <optional>

#include "ir/baseline_memory.h"
#include "ir/dtype.h"
#include "ir/in_place_writes.h"
#include "ir/liveness.h"

namespace memplan::solvers {
namespace {

// prefix[s] = compute time of the steps before s in the baseline order.
std::vector<double> prefix_times(const ir::NodeCosts& costs) {
  std::vector<double> prefix(costs.seconds.size() + 1, 0.0);
  for (std::size_t i = 0; i < costs.seconds.size(); ++i)
    prefix[i + 1] = prefix[i] + costs.seconds[i];
  return prefix;
}

// The nodes a recompute of `t` at step `at` runs: its producer, plus
// (recursively) the producers of inputs that are no longer on the device
// there in the baseline. False when not possible (a random node, or a chain
// too long). `nodes` may repeat a node (a diamond in the chain); `leaves`,
// when given, collects the chain's inputs that are read where they are
// (resident at `at`), graph inputs and parameters among them. A Dropout inside
// the chain (not `t`'s own producer) is remade from its mask only when
// `inner_masks` holds that mask on the device (the scheduler remakes a
// Dropout from a kept mask only).
bool chain_nodes(const ir::Graph& g, const ir::Liveness& live, ir::TensorId t, std::int64_t at,
                 int depth_left, const std::vector<bool>* inner_masks,
                 std::vector<ir::NodeId>& nodes, std::vector<ir::TensorId>* leaves = nullptr) {
  const ir::Tensor& x = g.tensor(t);
  if (x.producer == ir::kNoNode || depth_left <= 0) return false;
  const ir::Node& p = g.node(x.producer);
  if (!p.reproducible()) return false;
  if (p.is_random() && !nodes.empty() &&
      (inner_masks == nullptr || p.dropout_mask() == ir::kNoTensor ||
       !(*inner_masks)[p.dropout_mask()]))
    return false;
  auto resident_at = [&](ir::TensorId u) {
    return live.pinned(u) || (live.def_step(u) < at && live.free_step(u) >= at);
  };
  // A Dropout is remade from its mask, which must still be there; the mask
  // itself is random.
  if (const ir::TensorId mask = p.dropout_mask();
      mask != ir::kNoTensor && (mask == t || !resident_at(mask)))
    return false;
  nodes.push_back(x.producer);
  for (ir::TensorId in : p.inputs) {
    if (resident_at(in)) {
      // Pinned inputs too: training state may be a swapped candidate.
      if (leaves != nullptr) leaves->push_back(in);
      continue;
    }
    if (!chain_nodes(g, live, in, at, depth_left - 1, inner_masks, nodes, leaves)) return false;
  }
  return true;
}

void sort_unique(std::vector<ir::NodeId>& v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
}

// The time of a chain: each node once, as the scheduler runs it. None when
// `t` cannot be recomputed at `at`.
std::optional<double> chain_seconds(const ir::Graph& g, const ir::NodeCosts& costs,
                                    const ir::Liveness& live, ir::TensorId t, std::int64_t at,
                                    int depth, const std::vector<bool>* inner_masks,
                                    std::vector<ir::NodeId>* nodes_out = nullptr) {
  std::vector<ir::NodeId> nodes;
  if (!chain_nodes(g, live, t, at, depth, inner_masks, nodes)) return std::nullopt;
  sort_unique(nodes);
  double total = 0;
  for (ir::NodeId n : nodes) total += costs.seconds[n];
  if (nodes_out != nullptr) *nodes_out = std::move(nodes);
  return total;
}

// The first backward reader of `t`, or -1.
std::int64_t first_backward_reader(const ir::Graph& g, ir::TensorId t) {
  for (ir::NodeId r : g.tensor(t).consumers)
    if (!g.node(r).is_forward) return r;
  return -1;
}

// Dropout masks that remaking the Dropout's output reads, for its own
// recompute or inside chains (an output the backward never reads): they
// stay on the device (a bool mask is a quarter of the float32 output it
// rebuilds, a bit-packed one a thirty-second), so a remake never waits for
// one. Other masks are candidates like any activation, for a swap (a mask
// is random: never a recompute).
std::vector<bool> masks_held_for_recompute(const ir::Graph& g, const ir::NodeCosts& costs,
                                           const ir::Liveness& live,
                                           const ProblemOptions& options) {
  std::vector<bool> held(g.tensors().size(), false);
  if (!options.evictions.recompute) return held;
  for (const ir::Node& n : g.nodes()) {
    const ir::TensorId mask = n.dropout_mask();
    if (mask == ir::kNoTensor) continue;
    // An output the backward never reads is remade only inside chains.
    const std::int64_t k = first_backward_reader(g, n.outputs[0]);
    if (k < 0 ||
        chain_seconds(g, costs, live, n.outputs[0], k, options.max_recompute_chain, nullptr))
      held[mask] = true;
  }
  return held;
}

// Chain holds (problem.h): for each recomputable candidate, the candidates
// its chain reads where they are, when their own reader comes later.
void add_chain_holds(const ir::Graph& g, const ir::Liveness& live, const ProblemOptions& options,
                     const std::vector<bool>* inner_masks, Problem& pr) {
  std::vector<std::int64_t> index(g.tensors().size(), -1);
  for (std::size_t i = 0; i < pr.candidates.size(); ++i)
    index[pr.candidates[i].tensor] = static_cast<std::int64_t>(i);
  std::vector<ir::TensorId> leaves;
  std::vector<ir::NodeId> nodes;
  for (std::size_t a = 0; a < pr.candidates.size(); ++a) {
    const Candidate& c = pr.candidates[a];
    if (!c.can_recompute) continue;
    const std::int64_t k = c.first_backward_use;
    leaves.clear();
    nodes.clear();
    chain_nodes(g, live, c.tensor, k, options.max_recompute_chain, inner_masks, nodes, &leaves);
    std::sort(leaves.begin(), leaves.end());
    leaves.erase(std::unique(leaves.begin(), leaves.end()), leaves.end());
    for (ir::TensorId u : leaves) {
      const std::int64_t j = index[u];
      if (j < 0 || static_cast<std::size_t>(j) == a) continue;
      const Candidate& in = pr.candidates[static_cast<std::size_t>(j)];
      if (in.first_backward_use <= k) continue;  // back by then anyway
      pr.holds.push_back({a, static_cast<std::size_t>(j), Interval{k, in.first_backward_use - 1},
                          in.bytes, static_cast<std::size_t>(j)});
    }
  }
  std::sort(pr.holds.begin(), pr.holds.end(), [](const ChainHold& x, const ChainHold& y) {
    return x.source != y.source ? x.source < y.source : x.held.begin < y.held.begin;
  });
}

// Swap: the free waits for the copy out, so it goes where forward compute
// since the tensor was made covers the copy; the copy in starts where
// backward compute until the reader covers it. `prefix`: prefix_times.
void set_swap_option(const std::vector<double>& prefix, double d2h, double h2d, Candidate& c) {
  auto time_between = [&](std::int64_t from_step, std::int64_t to_step) {  // steps [from, to)
    return prefix[static_cast<std::size_t>(to_step)] - prefix[static_cast<std::size_t>(from_step)];
  };
  const std::int64_t k = c.first_backward_use;
  c.swap_out_seconds = static_cast<double>(c.bytes) / d2h;
  c.swap_in_seconds = static_cast<double>(c.bytes) / h2d;
  // prefix is non-decreasing: both points are binary searches.
  const auto first = prefix.begin();
  double out_done = prefix[static_cast<std::size_t>(c.made + 1)] + c.swap_out_seconds;
  std::int64_t free_after = (std::lower_bound(first, prefix.end(), out_done) - first) - 1;
  free_after = std::clamp(free_after, c.last_forward_use, k - 1);
  double exposed_out = std::max(0.0, c.swap_out_seconds - time_between(c.made + 1, free_after + 1));
  double in_start = prefix[static_cast<std::size_t>(k)] - c.swap_in_seconds;
  // swap_in before this step
  std::int64_t load_at = (std::upper_bound(first, prefix.end(), in_start) - first) - 1;
  load_at = std::clamp(load_at, free_after + 1, k);
  double exposed_in = std::max(0.0, c.swap_in_seconds - time_between(load_at, k));
  c.swap_gap = Interval{free_after + 1, load_at - 1};
  c.swap_exposed_seconds = exposed_out + exposed_in;
  c.can_swap = !c.swap_gap.empty();
}

// Chain nodes that more than one candidate's recompute runs (problem.h).
void add_shared_steps(const ir::NodeCosts& costs,
                      std::vector<std::pair<ir::NodeId, std::size_t>>& run_by, Problem& pr) {
  std::sort(run_by.begin(), run_by.end());
  for (std::size_t i = 0; i < run_by.size();) {
    std::size_t e = i + 1;
    while (e < run_by.size() && run_by[e].first == run_by[i].first) ++e;
    const double seconds = costs.seconds[run_by[i].first];
    if (e - i > 1 && seconds > 0) {
      SharedChainStep step{seconds, {}};
      for (std::size_t k = i; k < e; ++k) step.readers.push_back(run_by[k].second);
      pr.shared_steps.push_back(std::move(step));
    }
    i = e;
  }
}

// The reads that bound a candidate's gap: its last forward reader (or
// `made`) and its first backward reader. False when nothing lies between.
bool set_uses(const ir::Graph& g, ir::TensorId t, std::int64_t made, Candidate& c) {
  const ir::Tensor& x = g.tensor(t);
  c.tensor = t;
  c.name = x.name;
  c.bytes = x.bytes;
  c.made = made;
  c.last_forward_use = made;
  c.first_backward_use = -1;
  for (ir::NodeId r : x.consumers) {
    if (g.node(r).is_forward) {
      c.last_forward_use = std::max<std::int64_t>(c.last_forward_use, r);
    } else if (c.first_backward_use < 0) {
      c.first_backward_use = r;
    }
  }
  return c.first_backward_use > c.last_forward_use + 1;
}

bool activation_uses(const ir::Graph& g, ir::TensorId t, const ProblemOptions& options,
                     Candidate& c) {
  const ir::Tensor& x = g.tensor(t);
  if (x.cls != ir::TensorClass::kActivation || x.bytes < options.min_bytes ||
      x.producer == ir::kNoNode)
    return false;
  return set_uses(g, t, x.producer, c);
}

// Training state (Candidate::state): resident before step 0, so made at -1.
// Floating-point graph inputs (ONNX Runtime's training graphs take
// parameters, buffers and optimizer state as inputs) and large
// floating-point initializers (weights of graphs that embed them); the
// small constants an exported graph carries (shapes, axes, scalars) are
// not worth a decision, and engines fold them.
bool is_state(const ir::Tensor& x, const ProblemOptions& options) {
  if (!x.initially_resident() || x.is_graph_output || x.bytes < options.min_bytes ||
      !ir::is_floating_point(x.elem_type))
    return false;
  return x.is_graph_input || x.bytes >= kMinInitializerStateBytes;
}

bool state_uses(const ir::Graph& g, ir::TensorId t, const ProblemOptions& options, Candidate& c) {
  if (!is_state(g.tensor(t), options)) return false;
  c.state = true;
  // State kept on the host between iterations comes in for its first read
  // whatever the choice: only a swap between a forward and a backward read
  // is left to decide.
  if (!set_uses(g, t, -1, c)) return false;
  return !g.tensor(t).starts_on_host || c.last_forward_use >= 0;
}

// Whether a node up to `step` writes t in place: its host copy from the
// start of the iteration is then stale.
bool written_by(const ir::Graph& g, ir::TensorId t, std::int64_t step) {
  for (ir::NodeId r : g.tensor(t).consumers)
    if (static_cast<std::int64_t>(r) <= step && ir::writes_in_place(g.node(r), t)) return true;
  return false;
}

// State kept on the host between iterations (ir::Tensor::starts_on_host),
// by first reader. Its copy in starts where it must to be done by its
// first reader on an idle link: from there to its last reader it is on
// the device. The copy out after its last write is left to the scheduler,
// which frees it once copied (docs/model.md §State on the host).
std::vector<HostCopy> host_copies(const ir::Graph& g, const std::vector<double>& prefix, double h2d,
                                  double d2h) {
  std::vector<HostCopy> out;
  for (ir::TensorId t = 0; t < g.tensors().size(); ++t) {
    const ir::Tensor& x = g.tensor(t);
    if (!x.starts_on_host || x.consumers.empty()) continue;
    HostCopy c;
    c.bytes = x.bytes;
    c.first_read = x.consumers.front();
    c.last_read = x.consumers.back();
    for (ir::NodeId r : x.consumers)
      if (ir::writes_in_place(g.node(r), t)) c.written = r;
    c.in_seconds = h2d > 0 ? static_cast<double>(x.bytes) / h2d : 0.0;
    c.out_seconds = c.written >= 0 && d2h > 0 ? static_cast<double>(x.bytes) / d2h : 0.0;
    const auto first = static_cast<std::size_t>(c.first_read);
    c.load = (std::upper_bound(prefix.begin(), prefix.end(), prefix[first] - c.in_seconds) -
              prefix.begin()) -
             1;
    c.load = std::clamp<std::int64_t>(c.load, 0, c.first_read);
    out.push_back(c);
  }
  std::stable_sort(out.begin(), out.end(), [](const HostCopy& a, const HostCopy& b) {
    return a.first_read < b.first_read;
  });
  return out;
}

// The baseline's bytes of host state leave the steps outside [load, last
// reader].
void take_host_state_off(const std::vector<HostCopy>& copies,
                         std::vector<std::uint64_t>& step_bytes) {
  // Unsigned wrap-around cancels: every prefix sum is a true byte count.
  std::vector<std::uint64_t> off(step_bytes.size() + 1, 0);
  for (const HostCopy& c : copies) {
    off[0] += c.bytes;
    off[static_cast<std::size_t>(c.load)] -= c.bytes;
    off[static_cast<std::size_t>(c.last_read) + 1] += c.bytes;
  }
  std::uint64_t run = 0;
  for (std::size_t s = 0; s < step_bytes.size(); ++s) {
    run += off[s];
    step_bytes[s] -= run;
  }
}

// Problem::host_copy_seconds. In: in the order of first readers, each
// started as early as the link allows and late by what it ends after its
// reader's start (delays carry on to the readers after it). Out: after the
// last writer, in that order; what the link runs past the last step's end.
double host_copy_stall(const std::vector<HostCopy>& copies, const std::vector<double>& prefix) {
  std::vector<std::pair<std::size_t, double>> out;  // (step, seconds)
  double link = 0, shift = 0;
  for (const HostCopy& c : copies) {
    link += c.in_seconds;
    shift = std::max(shift, link - prefix[static_cast<std::size_t>(c.first_read)]);
    if (c.written >= 0) out.emplace_back(static_cast<std::size_t>(c.written) + 1, c.out_seconds);
  }
  std::sort(out.begin(), out.end());
  link = 0;
  for (const auto& [step, seconds] : out) link = std::max(link, prefix[step] + shift) + seconds;
  return std::max(shift, link - prefix.back());
}

}  // namespace

std::uint64_t Problem::baseline_peak() const {
  std::uint64_t peak = 0;
  for (auto b : step_bytes) peak = std::max(peak, b);
  return peak;
}

std::vector<ir::TensorId> host_state_tensors(const ir::Graph& g, const ProblemOptions& options) {
  std::vector<ir::TensorId> out;
  for (ir::TensorId t = 0; t < g.tensors().size(); ++t)
    if (is_state(g.tensor(t), options) && !g.tensor(t).consumers.empty()) out.push_back(t);
  return out;
}

bool has_dropout_chains(const ir::Graph& g) {
  return std::any_of(g.nodes().begin(), g.nodes().end(), [](const ir::Node& n) {
    return n.is_forward && n.dropout_mask() != ir::kNoTensor;
  });
}

Problem build_problem(const ir::Graph& g, const ir::NodeCosts& costs, std::uint64_t budget_bytes,
                      const ProblemOptions& options) {
  Problem pr;
  ir::Liveness live(g);
  ir::BaselineMemory base = ir::baseline_memory(g, live);
  pr.step_bytes = base.after_compute;
  pr.step_seconds = costs.seconds;
  pr.budget_bytes = budget_bytes;
  const auto prefix = prefix_times(costs);
  pr.baseline_seconds = prefix.back();
  for (ir::NodeId i = 0; i < g.nodes().size(); ++i)
    (g.node(i).is_forward ? pr.forward_seconds : pr.backward_seconds) += costs.seconds[i];
  const double d2h = costs.device.d2h_bytes_per_s, h2d = costs.device.h2d_bytes_per_s;
  pr.host_copies = host_copies(g, prefix, h2d, d2h);
  take_host_state_off(pr.host_copies, pr.step_bytes);
  pr.host_copy_seconds = host_copy_stall(pr.host_copies, prefix);

  const std::vector<bool> held = masks_held_for_recompute(g, costs, live, options);
  const std::vector<bool>* inner_masks = options.remake_dropouts_in_chains ? &held : nullptr;
  std::vector<ir::NodeId> chain;
  std::vector<std::pair<ir::NodeId, std::size_t>> run_by;  // (chain node, candidate)
  for (ir::TensorId t = 0; t < g.tensors().size(); ++t) {
    Candidate c;
    const bool state = options.offload_state && state_uses(g, t, options, c);
    if (!state && (held[t] || !activation_uses(g, t, options, c))) continue;
    // Kept on the host between iterations and not written before the gap:
    // its host copy is current, so it leaves without a copy out.
    const bool copied = g.tensor(t).starts_on_host && !written_by(g, t, c.last_forward_use);
    if (options.evictions.swap && d2h > 0 && h2d > 0)
      set_swap_option(prefix, copied ? std::numeric_limits<double>::infinity() : d2h, h2d, c);
    if (options.evictions.recompute && !state) {
      chain.clear();
      const std::int64_t k = c.first_backward_use;
      const std::optional<double> s =
          chain_seconds(g, costs, live, t, k, options.max_recompute_chain, inner_masks, &chain);
      if (s) {
        c.recompute_seconds = *s;
        c.recompute_gap = Interval{c.last_forward_use + 1, k - 1};
        c.can_recompute = true;
      }
    }
    if (!c.can_swap && !c.can_recompute) continue;
    if (c.can_recompute)
      for (ir::NodeId n : chain) run_by.emplace_back(n, pr.candidates.size());
    pr.candidates.push_back(std::move(c));
  }
  add_shared_steps(costs, run_by, pr);
  if (options.evictions.recompute) add_chain_holds(g, live, options, inner_masks, pr);
  return pr;
}

}  // namespace memplan::solvers
