#include "solvers/link_queue.h"

#include <algorithm>
#include <limits>
#include <numeric>

namespace memplan::solvers {
namespace {

// T(s): compute seconds before step s.
std::vector<double> step_starts(const Problem& p) {
  std::vector<double> t(p.step_seconds.size() + 1, 0.0);
  for (std::size_t s = 0; s < p.step_seconds.size(); ++s) t[s + 1] = t[s] + p.step_seconds[s];
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

LinkCopies link_copies(const Problem& p) {
  const std::vector<double> t = step_starts(p);
  auto over = [&](std::int64_t s) {
    return s >= 0 && static_cast<std::size_t>(s) < p.step_bytes.size() &&
           p.step_bytes[static_cast<std::size_t>(s)] > p.budget_bytes;
  };
  LinkCopies c;
  for (std::size_t i = 0; i < p.candidates.size(); ++i) {
    const Candidate& a = p.candidates[i];
    if (!a.can_swap) continue;
    // The model's points are the latest free and the latest load that its
    // exposed time prices. The scheduler frees later and loads earlier
    // wherever the budget allows (docs/scheduling.md, rules 3 and 8), and
    // it always allows at a step whose baseline memory is within budget,
    // whatever else is evicted: so the copy out is due at the first such
    // over-budget step of the gap, and the copy in may start right after
    // the gap's last one. Out: from when the tensor exists; in: until its
    // first backward reader.
    std::int64_t due = a.swap_gap.begin;
    while (due <= a.swap_gap.end && !over(due)) ++due;
    std::int64_t load = a.swap_gap.end + 1;
    while (load - 1 > due && !over(load - 1)) --load;
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

std::vector<std::size_t> swapped_by(const Problem& p, std::span<const Decision> choice,
                                    std::int64_t Candidate::*key) {
  std::vector<std::size_t> v;
  for (std::size_t i = 0; i < choice.size(); ++i)
    if (choice[i] == Decision::kSwap && p.candidates[i].can_swap) v.push_back(i);
  std::stable_sort(v.begin(), v.end(), [&](std::size_t a, std::size_t b) {
    return p.candidates[a].*key < p.candidates[b].*key;
  });
  return v;
}

// Copies out in the order their tensors are made; a free waits (and the
// compute with it) only where its copy is still running and there is no
// room to keep the tensor one more step.
double replay_out(const Problem& p, std::span<const Decision> choice, const std::vector<double>& t,
                  std::vector<std::int64_t>& r) {
  double link = 0, shift = 0;
  for (std::size_t i : swapped_by(p, choice, &Candidate::made)) {
    const Candidate& c = p.candidates[i];
    const auto bytes = static_cast<std::int64_t>(c.bytes);
    const double end = std::max(at(t, c.made + 1) + shift, link) + c.swap_out_seconds;
    link = end;
    std::int64_t s = c.swap_gap.begin;
    for (; s <= c.swap_gap.end && at(t, s) + shift < end; ++s) {
      if (r[static_cast<std::size_t>(s)] < bytes) break;
      r[static_cast<std::size_t>(s)] -= bytes;
    }
    if (s <= c.swap_gap.end && at(t, s) + shift < end) shift += end - (at(t, s) + shift);
  }
  return shift;
}

// Copies in, in the order of their readers: each starts at the latest
// start that keeps it and the copies behind it on time, moved later past
// any step without room for it; its reader waits for the rest.
double replay_in(const Problem& p, std::span<const Decision> choice, const std::vector<double>& t,
                 std::vector<std::int64_t>& r) {
  const std::vector<std::size_t> order = swapped_by(p, choice, &Candidate::first_backward_use);
  std::vector<double> latest(order.size());
  double next = std::numeric_limits<double>::infinity();
  for (std::size_t j = order.size(); j-- > 0;) {
    const Candidate& c = p.candidates[order[j]];
    latest[j] = std::min(at(t, c.first_backward_use), next) - c.swap_in_seconds;
    next = latest[j];
  }
  double link = 0, shift = 0;
  std::int64_t previous = 0;
  for (std::size_t j = 0; j < order.size(); ++j) {
    const Candidate& c = p.candidates[order[j]];
    const auto bytes = static_cast<std::int64_t>(c.bytes);
    const std::int64_t by_time = std::upper_bound(t.begin(), t.end(), latest[j]) - t.begin() - 1;
    const std::int64_t lo = std::max({by_time, c.swap_gap.begin + 1, previous});
    std::int64_t slot = c.swap_gap.end + 1;  // the model's load point: room by definition
    while (slot > lo && r[static_cast<std::size_t>(slot - 1)] >= bytes) --slot;
    for (std::int64_t s = slot; s <= c.swap_gap.end; ++s) r[static_cast<std::size_t>(s)] -= bytes;
    previous = slot;
    const double end = std::max(at(t, slot) + shift, link) + c.swap_in_seconds;
    link = end;
    const double due = at(t, c.first_backward_use) + shift;
    if (end > due) shift += end - due;
  }
  return shift;
}

}  // namespace

double replayed_link_stall(const Problem& p, std::span<const Decision> choice) {
  const std::vector<double> t = step_starts(p);
  std::vector<std::int64_t> r = room(p, choice);
  const double out = replay_out(p, choice, t, r);
  return out + replay_in(p, choice, t, r);
}

ReplayedObjective replayed_objective(const Problem& p, std::span<const Decision> choice,
                                     const ModelEval& model) {
  double link_terms = model.link_out_excess + model.link_in_excess;
  for (std::size_t i = 0; i < choice.size(); ++i)
    if (choice[i] == Decision::kSwap) link_terms += p.candidates[i].swap_exposed_seconds;
  const double stall = replayed_link_stall(p, choice);
  return {std::max(0.0, model.overhead_seconds - link_terms) + stall, stall};
}

double replayed_overhead_seconds(const Problem& p, std::span<const Decision> choice) {
  return replayed_objective(p, choice, evaluate(p, choice)).seconds;
}

}  // namespace memplan::solvers
