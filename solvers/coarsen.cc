#include "solvers/coarsen.h"

#include <algorithm>
#include <numeric>

namespace memplan::solvers {
namespace {

Interval intersect(const Interval& a, const Interval& b) {
  return Interval{std::max(a.begin, b.begin), std::min(a.end, b.end)};
}

}  // namespace

Coarsened coarsen(const Problem& p, std::size_t max_groups, bool mix_options) {
  Coarsened out;
  out.problem.step_bytes = p.step_bytes;
  out.problem.step_seconds = p.step_seconds;
  out.problem.budget_bytes = p.budget_bytes;
  out.problem.forward_seconds = p.forward_seconds;
  out.problem.backward_seconds = p.backward_seconds;
  out.problem.baseline_seconds = p.baseline_seconds;
  out.problem.holds_cost_time = p.holds_cost_time;
  out.problem.host_copy_seconds = p.host_copy_seconds;
  out.problem.host_copies = p.host_copies;
  const std::size_t n = p.candidates.size();
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](auto a, auto b) { return p.candidates[a].made < p.candidates[b].made; });
  const std::size_t per_group =
      std::max<std::size_t>(1, (n + max_groups - 1) / std::max<std::size_t>(1, max_groups));

  for (std::size_t k = 0; k < n;) {
    const Candidate& first = p.candidates[order[k]];
    Candidate g = first;
    g.name = first.name;
    std::vector<std::size_t> members{order[k]};
    std::size_t j = k + 1;
    for (; j < n && members.size() < per_group; ++j) {
      const Candidate& c = p.candidates[order[j]];
      Interval sw = intersect(g.swap_gap, c.swap_gap),
               rc = intersect(g.recompute_gap, c.recompute_gap);
      if (mix_options) {
        // Options every member allows and that still free something.
        const bool can_swap = g.can_swap && c.can_swap && !sw.empty();
        const bool can_recompute = g.can_recompute && c.can_recompute && !rc.empty();
        if (!can_swap && !can_recompute) break;
        g.can_swap = can_swap;
        g.can_recompute = can_recompute;
      } else {
        if (c.can_swap != first.can_swap || c.can_recompute != first.can_recompute) break;
        // Stop before a member would leave the group with nothing to free.
        if ((g.can_swap && sw.empty()) || (g.can_recompute && rc.empty())) break;
      }
      g.swap_gap = sw;
      g.recompute_gap = rc;
      g.bytes += c.bytes;
      g.swap_out_seconds += c.swap_out_seconds;
      g.swap_in_seconds += c.swap_in_seconds;
      g.swap_exposed_seconds += c.swap_exposed_seconds;
      g.recompute_seconds += c.recompute_seconds;
      g.made = std::min(g.made, c.made);
      g.first_backward_use = std::min(g.first_backward_use, c.first_backward_use);
      g.last_forward_use = std::max(g.last_forward_use, c.last_forward_use);
      members.push_back(order[j]);
    }
    if (members.size() > 1) g.name += " (+" + std::to_string(members.size() - 1) + ")";
    out.problem.candidates.push_back(std::move(g));
    out.members.push_back(std::move(members));
    k = j;
  }
  // A group's gap is inside each member's, so a hold's span there is inside
  // the member's span: the coarse model still never frees more than the
  // fine one.
  std::vector<std::size_t> group_of(n, 0);
  for (std::size_t gi = 0; gi < out.members.size(); ++gi)
    for (std::size_t m : out.members[gi]) group_of[m] = gi;
  for (const ChainHold& h : p.holds)
    out.problem.holds.push_back({group_of[h.reader], group_of[h.input], h.held, h.bytes, h.source});
  // A group recomputes all its members, so a step it runs for several of
  // them counts once per member, as a repeated reader.
  for (SharedChainStep step : p.shared_steps) {
    for (std::size_t& r : step.readers) r = group_of[r];
    std::sort(step.readers.begin(), step.readers.end());
    out.problem.shared_steps.push_back(std::move(step));
  }
  return out;
}

std::vector<Decision> expand(const Coarsened& c, const std::vector<Decision>& coarse_choice,
                             std::size_t fine_candidates) {
  std::vector<Decision> fine(fine_candidates, Decision::kKeep);
  for (std::size_t gi = 0; gi < c.members.size() && gi < coarse_choice.size(); ++gi)
    for (std::size_t m : c.members[gi]) fine[m] = coarse_choice[gi];
  return fine;
}

}  // namespace memplan::solvers
