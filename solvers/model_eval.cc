#include "solvers/model_eval.h"

#include <algorithm>
#include <stdexcept>

namespace memplan::solvers {

bool allowed(const Candidate& c, Decision d) {
  switch (d) {
    case Decision::kKeep:
      return true;
    case Decision::kSwap:
      return c.can_swap;
    case Decision::kRecompute:
      return c.can_recompute;
  }
  return false;
}

Interval hold_span(const Problem& p, const ChainHold& h, Decision reader, Decision input) {
  if (reader != Decision::kRecompute || input == Decision::kKeep) return {};
  const Candidate& c = p.candidates[h.input];
  const Interval& gap = input == Decision::kSwap ? c.swap_gap : c.recompute_gap;
  return Interval{std::max(gap.begin, h.held.begin), std::min(gap.end, h.held.end)};
}

std::vector<std::pair<std::size_t, std::size_t>> hold_groups(const Problem& p) {
  std::vector<std::pair<std::size_t, std::size_t>> groups;
  for (std::size_t h = 0; h < p.holds.size();) {
    std::size_t e = h + 1;
    while (e < p.holds.size() && p.holds[e].source == p.holds[h].source) ++e;
    groups.emplace_back(h, e);
    h = e;
  }
  return groups;
}

Interval held_back(const Problem& p, std::size_t first, std::size_t end,
                   std::span<const Decision> choice) {
  if (p.holds_cost_time && choice[p.holds[first].input] == Decision::kRecompute) return {};
  for (std::size_t h = first; h < end; ++h) {
    const ChainHold& x = p.holds[h];
    if (choice[x.reader] == Decision::kRecompute)
      return hold_span(p, x, Decision::kRecompute, choice[x.input]);
  }
  return {};
}

double hold_seconds(const Problem& p, std::size_t first, std::size_t end,
                    std::span<const Decision> choice) {
  const std::size_t input = p.holds[first].input;
  if (!p.holds_cost_time || choice[input] != Decision::kRecompute) return 0;
  for (std::size_t h = first; h < end; ++h)
    if (choice[p.holds[h].reader] == Decision::kRecompute)
      return p.candidates[input].recompute_seconds;
  return 0;
}

std::vector<std::uint64_t> freed_per_step(const Problem& p, std::span<const Decision> choice) {
  if (choice.size() != p.candidates.size()) throw std::invalid_argument("one choice per candidate");
  // Difference array: +bytes where a gap opens, -bytes after it closes.
  std::vector<std::int64_t> diff(p.step_bytes.size() + 1, 0);
  for (std::size_t i = 0; i < choice.size(); ++i) {
    const Candidate& c = p.candidates[i];
    const Interval* gap = choice[i] == Decision::kSwap        ? &c.swap_gap
                          : choice[i] == Decision::kRecompute ? &c.recompute_gap
                                                              : nullptr;
    if (gap == nullptr || gap->empty()) continue;
    diff[static_cast<std::size_t>(gap->begin)] += static_cast<std::int64_t>(c.bytes);
    diff[static_cast<std::size_t>(gap->end) + 1] -= static_cast<std::int64_t>(c.bytes);
  }
  for (const auto& [first, end] : hold_groups(p)) {
    const Interval back = held_back(p, first, end, choice);
    if (back.empty()) continue;
    const auto bytes = static_cast<std::int64_t>(p.holds[first].bytes);
    diff[static_cast<std::size_t>(back.begin)] -= bytes;
    diff[static_cast<std::size_t>(back.end) + 1] += bytes;
  }
  std::vector<std::uint64_t> freed(p.step_bytes.size());
  std::int64_t run = 0;
  for (std::size_t s = 0; s < freed.size(); ++s) {
    run += diff[s];
    freed[s] = static_cast<std::uint64_t>(std::max<std::int64_t>(run, 0));
  }
  return freed;
}

double shared_step_saving(const Problem& p, std::span<const Decision> choice) {
  double saved = 0;
  for (const SharedChainStep& step : p.shared_steps) {
    std::size_t runs = 0;
    for (std::size_t r : step.readers) runs += choice[r] == Decision::kRecompute ? 1 : 0;
    if (runs > 1) saved += step.seconds * static_cast<double>(runs - 1);
  }
  return saved;
}

ModelEval evaluate(const Problem& p, std::span<const Decision> choice) {
  ModelEval e;
  auto freed = freed_per_step(p, choice);
  for (std::size_t s = 0; s < freed.size(); ++s) {
    std::uint64_t in_use = p.step_bytes[s] - std::min(freed[s], p.step_bytes[s]);
    if (e.peak_step < 0 || in_use > e.peak_bytes) {
      e.peak_bytes = in_use;
      e.peak_step = static_cast<std::int64_t>(s);
    }
  }
  e.fits = e.peak_bytes <= p.budget_bytes;
  double out = 0, in = 0;
  for (std::size_t i = 0; i < choice.size(); ++i) {
    const Candidate& c = p.candidates[i];
    if (choice[i] == Decision::kSwap) {
      e.overhead_seconds += c.swap_exposed_seconds;
      out += c.swap_out_seconds;
      in += c.swap_in_seconds;
    } else if (choice[i] == Decision::kRecompute) {
      e.overhead_seconds += c.recompute_seconds;
    }
  }
  e.overhead_seconds -= shared_step_saving(p, choice);
  e.overhead_seconds += p.host_copy_seconds;
  if (p.holds_cost_time)
    for (const auto& [first, end] : hold_groups(p))
      e.overhead_seconds += hold_seconds(p, first, end, choice);
  e.link_out_excess = std::max(0.0, out - p.forward_seconds);
  e.link_in_excess = std::max(0.0, in - p.backward_seconds);
  e.overhead_seconds += e.link_out_excess + e.link_in_excess;
  return e;
}

}  // namespace memplan::solvers
