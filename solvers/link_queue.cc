#include "solvers/link_queue.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <queue>
#include <utility>

namespace memplan::solvers {
namespace {

// T(s): when step s's turn starts, after the compute of every earlier step
// and the recomputes (`remakes`, by step; none when empty) of every
// earlier turn.
std::vector<double> step_starts(const Problem& p, const std::vector<double>& remakes = {}) {
  std::vector<double> t(p.step_seconds.size() + 1, 0.0);
  for (std::size_t s = 0; s < p.step_seconds.size(); ++s)
    t[s + 1] = t[s] + (s < remakes.size() ? remakes[s] : 0.0) + p.step_seconds[s];
  return t;
}

double at(const std::vector<double>& t, std::int64_t step) {
  const auto s = static_cast<std::size_t>(
      std::clamp<std::int64_t>(step, 0, static_cast<std::int64_t>(t.size()) - 1));
  return t[s];
}

void sort_queue(std::vector<LinkCopy>& q) {
  std::stable_sort(q.begin(), q.end(), [](const LinkCopy& a, const LinkCopy& b) {
    return a.release != b.release ? a.release < b.release : a.candidate < b.candidate;
  });
}

// One busy period's latest copy: where in the queue it is, and by how much.
struct Late {
  std::size_t period_first = 0;  // queue index where the period began
  std::size_t index = 0;
  double start = 0;
  double by = 0;
};

// The latest copy of each busy period of `q` under `choice`.
std::vector<Late> late_copies(const std::vector<LinkCopy>& q, std::span<const Decision> choice) {
  std::vector<Late> out;
  double free_at = -1, start = 0;
  std::size_t first = 0;
  Late worst;
  bool have = false;
  for (std::size_t i = 0; i < q.size(); ++i) {
    if (choice[q[i].candidate] != Decision::kSwap) continue;
    if (q[i].release >= free_at) {  // the link was idle: a new busy period
      if (have) out.push_back(worst);
      have = false;
      start = q[i].release;
      first = i;
      free_at = start;
    }
    free_at += q[i].seconds;
    const double by = free_at - q[i].deadline;
    if (by > 0 && (!have || by > worst.by)) {
      worst = {first, i, start, by};
      have = true;
    }
  }
  if (have) out.push_back(worst);
  return out;
}

}  // namespace

OverBudgetSteps::OverBudgetSteps(const Problem& p)
    : next_(p.step_bytes.size()), prev_(p.step_bytes.size()) {
  const std::size_t n = p.step_bytes.size();
  auto over = [&](std::size_t s) { return p.step_bytes[s] > p.budget_bytes; };
  for (std::size_t s = 0; s < n; ++s)
    prev_[s] = over(s) ? static_cast<std::int64_t>(s) : (s > 0 ? prev_[s - 1] : -1);
  for (std::size_t s = n; s-- > 0;)
    next_[s] = over(s) ? static_cast<std::int64_t>(s) : (s + 1 < n ? next_[s + 1] : kNone);
}

std::int64_t OverBudgetSteps::first_from(std::int64_t s) const {
  const auto n = static_cast<std::int64_t>(next_.size());
  if (s >= n || n == 0) return kNone;
  return next_[static_cast<std::size_t>(std::max<std::int64_t>(s, 0))];
}

std::int64_t OverBudgetSteps::last_upto(std::int64_t s) const {
  if (s < 0 || next_.empty()) return -1;
  const auto n = static_cast<std::int64_t>(prev_.size());
  return prev_[static_cast<std::size_t>(std::min(s, n - 1))];
}

LinkCopies link_copies(const Problem& p) {
  const std::vector<double> t = step_starts(p);
  const OverBudgetSteps over(p);
  LinkCopies c;
  for (std::size_t i = 0; i < p.candidates.size(); ++i) {
    const Candidate& a = p.candidates[i];
    if (!a.can_swap) continue;
    // The model's points are the latest free and the latest load that its
    // exposed time prices. The scheduler frees later and loads earlier
    // wherever the budget allows (docs/scheduling.md, rules 3 and 8), and
    // it always allows at a step whose baseline memory is within budget,
    // whatever else is evicted: so the copy out is due at the first such
    // over-budget step of the gap (or just past it), and the copy in may
    // start right after the gap's last one (not before the due step).
    // Out: from when the tensor exists; in: until its first backward reader.
    const Interval& g = a.swap_gap;
    const std::int64_t due = g.empty() ? g.begin : std::min(over.first_from(g.begin), g.end + 1);
    std::int64_t load = g.end + 1;
    if (g.end > due) load = std::max(over.last_upto(g.end), due) + 1;
    LinkCopy out{i, at(t, a.made + 1), at(t, due), a.swap_out_seconds};
    LinkCopy in{i, at(t, load), at(t, a.first_backward_use), a.swap_in_seconds};
    for (LinkCopy* copy : {&out, &in})
      copy->deadline = std::max(copy->deadline, copy->release + copy->seconds);
    c.to_host.push_back(out);
    c.to_device.push_back(in);
  }
  sort_queue(c.to_host);
  sort_queue(c.to_device);
  return c;
}

double LinkCut::delay(std::span<const Decision> choice) const {
  if (choice[last] != Decision::kSwap) return 0;
  double load = 0;
  for (std::size_t k = 0; k < members.size(); ++k)
    if (choice[members[k]] == Decision::kSwap) load += seconds[k];
  return std::max(0.0, load - capacity);
}

std::vector<LinkCut> late_copy_cuts(const LinkCopies& copies, std::span<const Decision> choice,
                                    double tolerance) {
  std::vector<LinkCut> cuts;
  for (bool to_device : {false, true}) {
    const std::vector<LinkCopy>& q = to_device ? copies.to_device : copies.to_host;
    for (const Late& late : late_copies(q, choice)) {
      if (late.by <= tolerance) continue;
      LinkCut cut;
      cut.to_device = to_device;
      cut.last = q[late.index].candidate;
      cut.start = late.start;
      cut.capacity = q[late.index].deadline - late.start;
      // Every copy queued in [start, last], chosen or not: the cut must hold
      // for any assignment.
      std::size_t from = late.period_first;
      while (from > 0 && q[from - 1].release >= late.start) --from;
      for (std::size_t k = from; k <= late.index; ++k) {
        cut.members.push_back(q[k].candidate);
        cut.seconds.push_back(q[k].seconds);
      }
      cuts.push_back(std::move(cut));
    }
  }
  return cuts;
}

double queue_delay(const LinkCopies& copies, std::span<const Decision> choice) {
  double total = 0;
  for (const auto* q : {&copies.to_host, &copies.to_device})
    for (const Late& late : late_copies(*q, choice)) total += late.by;
  return total;
}

namespace {

// Under `choice`, the seconds each step's turn spends on recomputes before
// its compute: a recomputed tensor's chain runs in its reader's turn, and
// the h2d link copies on meanwhile, as it does in the schedule.
std::vector<double> remake_seconds(const Problem& p, std::span<const Decision> choice) {
  std::vector<double> extra(p.step_seconds.size() + 1, 0.0);
  const auto last = static_cast<std::int64_t>(extra.size()) - 1;
  for (std::size_t i = 0; i < choice.size(); ++i) {
    const Candidate& c = p.candidates[i];
    if (choice[i] == Decision::kRecompute && c.first_backward_use >= 0)
      extra[static_cast<std::size_t>(std::min(c.first_backward_use, last))] += c.recompute_seconds;
  }
  return extra;
}

// Budget minus the model's memory under the choice, per step.
std::vector<std::int64_t> room(const Problem& p, std::span<const Decision> choice) {
  const std::vector<std::uint64_t> freed = freed_per_step(p, choice);
  // Saturated so that a budget of "no limit" (UINT64_MAX) stays all room.
  constexpr std::uint64_t kMax = std::numeric_limits<std::int64_t>::max() / 4;
  const auto budget = static_cast<std::int64_t>(std::min(p.budget_bytes, kMax));
  std::vector<std::int64_t> r(p.step_bytes.size());
  for (std::size_t s = 0; s < r.size(); ++s)
    r[s] = budget - static_cast<std::int64_t>(std::min(p.step_bytes[s], kMax)) +
           static_cast<std::int64_t>(std::min(freed[s], kMax));
  return r;
}

// A copy out as the replay sees it: on the d2h link after step `made`, its
// tensor pending (kept, its free deferred) from step `pending_from` until
// the copy ends.
struct OutCopy {
  std::int64_t made = 0;
  std::int64_t pending_from = 0;
  std::int64_t bytes = 0;
  double seconds = 0;
};

// A copy in: resident in the model from step `load`, read at `reader`; the
// scheduler may start it from step `earliest` on.
struct InCopy {
  std::int64_t reader = 0;
  std::int64_t load = 0;
  std::int64_t earliest = 0;
  std::int64_t bytes = 0;
  double seconds = 0;
};

// The chosen swaps' copies and the host state's (Problem::host_copies), in
// the order of `key`.
template <typename Copy>
void sort_by(std::vector<Copy>& v, std::int64_t Copy::*key) {
  std::stable_sort(v.begin(), v.end(),
                   [&](const Copy& a, const Copy& b) { return a.*key < b.*key; });
}

std::vector<OutCopy> copies_out(const Problem& p, std::span<const Decision> choice) {
  std::vector<OutCopy> v;
  for (std::size_t i = 0; i < choice.size(); ++i) {
    const Candidate& c = p.candidates[i];
    if (choice[i] == Decision::kSwap && c.can_swap)
      v.push_back(
          {c.made, c.swap_gap.begin, static_cast<std::int64_t>(c.bytes), c.swap_out_seconds});
  }
  for (const HostCopy& h : p.host_copies)
    if (h.written >= 0)
      v.push_back({h.written, h.last_read + 1, static_cast<std::int64_t>(h.bytes), h.out_seconds});
  sort_by(v, &OutCopy::made);
  return v;
}

std::vector<InCopy> copies_in(const Problem& p, std::span<const Decision> choice) {
  std::vector<InCopy> v;
  for (std::size_t i = 0; i < choice.size(); ++i) {
    const Candidate& c = p.candidates[i];
    if (choice[i] == Decision::kSwap && c.can_swap)
      v.push_back({c.first_backward_use, c.swap_gap.end + 1, c.swap_gap.begin + 1,
                   static_cast<std::int64_t>(c.bytes), c.swap_in_seconds});
  }
  for (const HostCopy& h : p.host_copies)
    v.push_back({h.first_read, h.load, 0, static_cast<std::int64_t>(h.bytes), h.in_seconds});
  sort_by(v, &InCopy::reader);
  return v;
}

// The d2h link's replay: the compute stall it causes, and for each copy
// (in `made` order) the stall before it started.
struct OutReplay {
  double shift = 0;
  std::vector<double> shift_at_start;
};

// Copies out in the order their tensors are made (the d2h stream is in
// order and starts a copy once its tensor exists). From the start of its
// gap a tensor whose copy still runs is pending: kept on the device, its
// free deferred. Where the pending bytes do not fit the step's room, the
// compute waits for the copies that end first, as the scheduler's
// make_room frees them (gpt2_xl v100 30 %: waiting on the latest copy
// instead said 52.6 ms of stall where the schedule has 11.1 ms). The
// pending bytes left come off each step's room.
OutReplay replay_out(const std::vector<OutCopy>& by_made, const std::vector<double>& t,
                     std::vector<std::int64_t>& r) {
  std::vector<std::size_t> by_gap(by_made.size());
  std::iota(by_gap.begin(), by_gap.end(), std::size_t{0});
  std::stable_sort(by_gap.begin(), by_gap.end(), [&](std::size_t a, std::size_t b) {
    return by_made[a].pending_from < by_made[b].pending_from;
  });
  std::vector<double> end(by_made.size(), 0.0);
  using Pending = std::pair<double, std::int64_t>;  // copy end, bytes
  std::priority_queue<Pending, std::vector<Pending>, std::greater<>> pending;
  std::int64_t held = 0;
  double link = 0, shift = 0;
  OutReplay out;
  out.shift_at_start.resize(by_made.size());
  std::size_t started = 0, entered = 0;
  for (std::int64_t s = 0; s < static_cast<std::int64_t>(r.size()); ++s) {
    for (; started < by_made.size() && by_made[started].made < s; ++started) {
      link = std::max(at(t, by_made[started].made + 1) + shift, link) + by_made[started].seconds;
      end[started] = link;
      out.shift_at_start[started] = shift;
    }
    for (; entered < by_gap.size() && by_made[by_gap[entered]].pending_from <= s; ++entered) {
      const std::size_t i = by_gap[entered];
      if (end[i] <= at(t, s) + shift) continue;
      pending.push({end[i], by_made[i].bytes});
      held += by_made[i].bytes;
    }
    auto& room = r[static_cast<std::size_t>(s)];
    while (!pending.empty() &&
           (pending.top().first <= at(t, s) + shift || held > std::max<std::int64_t>(room, 0))) {
      shift = std::max(shift, pending.top().first - at(t, s));
      held -= pending.top().second;
      pending.pop();
    }
    room -= held;
  }
  for (; started < by_made.size(); ++started) out.shift_at_start[started] = shift;
  out.shift = shift;
  return out;
}

// The model's load point has room by definition only where the choice
// fits: a step between it and the reader that the model has over budget
// holds no reloaded tensor in the schedule (rule 8), so the copy starts
// after the last such step (mlp_dropout a100-40gb 95 %: a gradient buffer
// reloaded behind the weight-gradient product, 23.9 % simulated, 0 % in the
// model before).
std::int64_t reload_point(const InCopy& c, const std::vector<std::int64_t>& r) {
  const auto last = std::min<std::int64_t>(c.reader, static_cast<std::int64_t>(r.size()));
  for (std::int64_t s = last - 1; s >= c.load; --s)
    if (r[static_cast<std::size_t>(s)] < 0) return s + 1;
  return c.load;
}

// Copies in, in the order of their readers: each starts at the latest
// start that keeps it and the copies behind it on time, moved later past
// any step without room for it; its reader waits for the rest. Returns, for
// each step s, the stall of the readers before s.
std::vector<double> replay_in(const std::vector<InCopy>& order, const std::vector<double>& t,
                              const std::vector<double>& remakes, std::vector<std::int64_t>& r) {
  std::vector<double> stall_before(t.size(), 0.0);
  // A reader's compute follows its turn's recomputes.
  auto due_at = [&](std::int64_t step) { return at(t, step) + at(remakes, step); };
  std::vector<double> latest(order.size());
  double next = std::numeric_limits<double>::infinity();
  for (std::size_t j = order.size(); j-- > 0;) {
    latest[j] = std::min(due_at(order[j].reader), next) - order[j].seconds;
    next = latest[j];
  }
  double link = 0, shift = 0;
  std::int64_t previous = 0;
  for (std::size_t j = 0; j < order.size(); ++j) {
    const InCopy& c = order[j];
    const std::int64_t by_time = std::upper_bound(t.begin(), t.end(), latest[j]) - t.begin() - 1;
    const std::int64_t lo = std::max({by_time, c.earliest, previous});
    std::int64_t slot = reload_point(c, r);
    while (slot > lo && r[static_cast<std::size_t>(slot - 1)] >= c.bytes) --slot;
    // Resident from the slot on, where the model has it from `load`.
    for (std::int64_t s = slot; s < c.load; ++s) r[static_cast<std::size_t>(s)] -= c.bytes;
    for (std::int64_t s = c.load; s < slot; ++s) r[static_cast<std::size_t>(s)] += c.bytes;
    previous = slot;
    const double end = std::max(at(t, slot) + shift, link) + c.seconds;
    link = end;
    const double due = due_at(c.reader) + shift;
    if (end > due) {
      shift += end - due;
      const auto after = static_cast<std::size_t>(std::max<std::int64_t>(c.reader, -1) + 1);
      if (after < stall_before.size()) stall_before[after] += end - due;
    }
  }
  std::partial_sum(stall_before.begin(), stall_before.end(), stall_before.begin());
  return stall_before;
}

// When the d2h link is done, the copies started as the replays of both
// links delayed their tensors' makers: past the last step, copies out of
// state kept on the host between iterations extend the iteration.
double link_tail(const std::vector<OutCopy>& by_made, const OutReplay& out,
                 const std::vector<double>& t, const std::vector<double>& in_stall) {
  double link = 0;
  for (std::size_t i = 0; i < by_made.size(); ++i) {
    const std::int64_t x = by_made[i].made + 1;
    link = std::max(at(t, x) + out.shift_at_start[i] + at(in_stall, x), link) + by_made[i].seconds;
  }
  return std::max(0.0, link - (t.back() + out.shift + in_stall.back()));
}

}  // namespace

double replayed_link_stall(const Problem& p, std::span<const Decision> choice) {
  const std::vector<double> remakes = remake_seconds(p, choice);
  const std::vector<double> t = step_starts(p, remakes);
  std::vector<std::int64_t> r = room(p, choice);
  const std::vector<OutCopy> outs = copies_out(p, choice);
  const OutReplay out = replay_out(outs, t, r);
  const std::vector<double> in = replay_in(copies_in(p, choice), t, remakes, r);
  return out.shift + in.back() + link_tail(outs, out, t, in);
}

ReplayedObjective replayed_objective(const Problem& p, std::span<const Decision> choice,
                                     const ModelEval& model) {
  // The host state's copies are in the replay too.
  double link_terms = model.link_out_excess + model.link_in_excess + p.host_copy_seconds;
  for (std::size_t i = 0; i < choice.size(); ++i)
    if (choice[i] == Decision::kSwap) link_terms += p.candidates[i].swap_exposed_seconds;
  const double stall = replayed_link_stall(p, choice);
  return {std::max(0.0, model.overhead_seconds - link_terms) + stall, stall};
}

double replayed_overhead_seconds(const Problem& p, std::span<const Decision> choice) {
  return replayed_objective(p, choice, evaluate(p, choice)).seconds;
}

}  // namespace memplan::solvers
