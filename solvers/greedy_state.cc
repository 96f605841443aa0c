#include "solvers/greedy_state.h"

#include <algorithm>

#include "solvers/model_eval.h"

namespace memplan::solvers {
namespace {

RangeMaxTree initial_excess(const Problem& p) {
  std::vector<std::int64_t> v(p.step_bytes.size());
  for (std::size_t s = 0; s < v.size(); ++s)
    v[s] = static_cast<std::int64_t>(p.step_bytes[s]) - static_cast<std::int64_t>(p.budget_bytes);
  return RangeMaxTree(v);
}

}  // namespace

GreedyState::GreedyState(const Problem& p)
    : p_(p),
      choice_(p.candidates.size(), Decision::kKeep),
      excess_(initial_excess(p)),
      groups_(hold_groups(p)),
      groups_of_(p.candidates.size()),
      shared_of_(p.candidates.size()),
      runs_(p.shared_steps.size(), 0) {
  for (std::size_t x = 0; x < p.shared_steps.size(); ++x)
    for (std::size_t r : p.shared_steps[x].readers) shared_of_[r].push_back(x);
  for (std::size_t gi = 0; gi < groups_.size(); ++gi) {
    for (std::size_t h = groups_[gi].first; h < groups_[gi].second; ++h) {
      groups_of_[p.holds[h].reader].push_back(gi);
      groups_of_[p.holds[h].input].push_back(gi);
    }
  }
  for (auto& g : groups_of_) {
    std::sort(g.begin(), g.end());
    g.erase(std::unique(g.begin(), g.end()), g.end());
  }
}

void GreedyState::set(std::size_t i, Decision d) {
  saved_ += saving_change(i, d);
  cost_sum_ += cost(i, d) - cost(i, choice_[i]);
  if ((choice_[i] == Decision::kRecompute) != (d == Decision::kRecompute))
    for (std::size_t x : shared_of_[i]) runs_[x] += d == Decision::kRecompute ? 1 : -1;
  apply_holds(i, -1);
  apply(i, choice_[i], +1);
  choice_[i] = d;
  apply(i, d, -1);
  apply_holds(i, +1);
}

std::optional<bool> GreedyState::fits_if_kept(std::size_t i) const {
  if (!groups_of_[i].empty() || !fits()) return std::nullopt;
  const Interval* g = gap(i, choice_[i]);
  if (g == nullptr || g->empty()) return true;
  return excess_.max(g->begin, g->end) + static_cast<std::int64_t>(p_.candidates[i].bytes) <= 0;
}

double GreedyState::marginal(std::size_t i, Decision d) const {
  auto link = [&](double out, double in) {
    return std::max(0.0, out - p_.forward_seconds) + std::max(0.0, in - p_.backward_seconds);
  };
  const Candidate& c = p_.candidates[i];
  double out = out_, in = in_;
  if (choice_[i] == Decision::kSwap) {
    out -= c.swap_out_seconds;
    in -= c.swap_in_seconds;
  }
  double base = link(out, in);
  double after =
      d == Decision::kSwap ? link(out + c.swap_out_seconds, in + c.swap_in_seconds) : base;
  return cost(i, d) - cost(i, choice_[i]) - saving_change(i, d) + hold_time_change(i, d) + after -
         link(out_, in_);
}

// How much more of the shared chain steps (problem.h) recomputes would
// share once candidate i takes option d: each step is paid once however
// many of its readers are recomputed.
double GreedyState::saving_change(std::size_t i, Decision d) const {
  const bool now = choice_[i] == Decision::kRecompute, then = d == Decision::kRecompute;
  if (now == then) return 0;
  const std::vector<std::size_t>& mine = shared_of_[i];
  double change = 0;
  for (std::size_t k = 0; k < mine.size();) {
    std::size_t e = k + 1;
    while (e < mine.size() && mine[e] == mine[k]) ++e;  // a coarse group reads it e - k times
    const auto m = static_cast<std::int64_t>(e - k), runs = runs_[mine[k]];
    const std::int64_t after = then ? runs + m : runs - m;
    change += p_.shared_steps[mine[k]].seconds *
              static_cast<double>(std::max<std::int64_t>(0, after - 1) -
                                  std::max<std::int64_t>(0, runs - 1));
    k = e;
  }
  return change;
}

// How much more the holds involving i cost in time (holds_cost_time)
// once i takes option d.
double GreedyState::hold_time_change(std::size_t i, Decision d) const {
  if (!p_.holds_cost_time || d == choice_[i]) return 0;
  auto as_if = [&](std::size_t k, bool moved) { return moved && k == i ? d : choice_[k]; };
  auto group_time = [&](std::size_t first, std::size_t end, bool moved) {
    const std::size_t input = p_.holds[first].input;
    if (as_if(input, moved) != Decision::kRecompute) return 0.0;
    for (std::size_t h = first; h < end; ++h)
      if (as_if(p_.holds[h].reader, moved) == Decision::kRecompute)
        return p_.candidates[input].recompute_seconds;
    return 0.0;
  };
  double change = 0;
  for (std::size_t gi : groups_of_[i])
    change += group_time(groups_[gi].first, groups_[gi].second, true) -
              group_time(groups_[gi].first, groups_[gi].second, false);
  return change;
}

// sign -1: the option frees its bytes over its window; +1 undoes that.
void GreedyState::apply(std::size_t i, Decision d, int sign) {
  const Candidate& c = p_.candidates[i];
  if (d == Decision::kSwap) {
    out_ -= sign * c.swap_out_seconds;
    in_ -= sign * c.swap_in_seconds;
  }
  const Interval* g = gap(i, d);
  if (g != nullptr && !g->empty())
    excess_.add(g->begin, g->end, sign * static_cast<std::int64_t>(c.bytes));
}

// sign +1: the chain holds involving i put their tensors back (under the
// current choices); -1 undoes that.
void GreedyState::apply_holds(std::size_t i, int sign) {
  for (std::size_t gi : groups_of_[i]) {
    const auto [first, end] = groups_[gi];
    const Interval back = held_back(p_, first, end, choice_);
    if (!back.empty())
      excess_.add(back.begin, back.end, sign * static_cast<std::int64_t>(p_.holds[first].bytes));
    hold_seconds_ += sign * hold_seconds(p_, first, end, choice_);
  }
}

}  // namespace memplan::solvers
