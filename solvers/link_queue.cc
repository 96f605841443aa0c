#include "solvers/link_queue.h"

#include <algorithm>
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

}  // namespace memplan::solvers
