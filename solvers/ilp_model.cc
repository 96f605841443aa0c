#include "solvers/ilp_model.h"

#include <algorithm>
#include <map>

namespace memplan::solvers {

std::size_t IlpModel::nonzeros() const {
  std::size_t n = 0;
  for (const auto& r : memory_rows) n += r.columns.size();
  return n;
}

IlpModel build_ilp_model(const Problem& p) {
  IlpModel m;
  std::vector<std::pair<const Interval*, int>> gaps;  // per column
  for (std::size_t i = 0; i < p.candidates.size(); ++i) {
    const Candidate& c = p.candidates[i];
    int swap_col = -1, rec_col = -1;
    if (c.can_swap) {
      swap_col = static_cast<int>(m.columns.size());
      m.columns.push_back({i, Decision::kSwap, c.swap_exposed_seconds});
      gaps.emplace_back(&c.swap_gap, swap_col);
    }
    if (c.can_recompute) {
      rec_col = static_cast<int>(m.columns.size());
      m.columns.push_back({i, Decision::kRecompute, c.recompute_seconds});
      gaps.emplace_back(&c.recompute_gap, rec_col);
    }
    if (swap_col >= 0 && rec_col >= 0) m.one_choice.emplace_back(swap_col, rec_col);
  }

  // Segment boundaries: every gap's begin and end + 1.
  const auto steps = static_cast<std::int64_t>(p.step_bytes.size());
  std::vector<std::int64_t> cuts{0, steps};
  for (const auto& [gap, col] : gaps) {
    cuts.push_back(gap->begin);
    cuts.push_back(gap->end + 1);
  }
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());

  // The largest excess in each segment; segments under budget get no row.
  std::vector<std::int64_t> seg_lo;
  std::map<std::int64_t, std::size_t> row_of_segment;  // segment start -> row
  for (std::size_t k = 0; k + 1 < cuts.size(); ++k) {
    std::int64_t lo = cuts[k], hi = cuts[k + 1] - 1;
    if (lo < 0 || lo >= steps) continue;
    std::uint64_t worst = 0;
    for (std::int64_t s = lo; s <= hi && s < steps; ++s) {
      worst = std::max(worst, p.step_bytes[static_cast<std::size_t>(s)]);
    }
    if (worst <= p.budget_bytes) continue;
    row_of_segment[lo] = m.memory_rows.size();
    IlpRow row;
    row.lower = static_cast<double>(worst - p.budget_bytes) * m.bytes_scale;
    m.memory_rows.push_back(row);
    seg_lo.push_back(lo);
  }
  // Each column covers the rows whose segment lies in its gap.
  for (const auto& [gap, col] : gaps) {
    if (gap->empty()) continue;
    auto it = row_of_segment.lower_bound(gap->begin);
    for (; it != row_of_segment.end() && it->first <= gap->end; ++it) {
      IlpRow& row = m.memory_rows[it->second];
      row.columns.push_back(col);
      row.coefficients.push_back(static_cast<double>(p.candidates[m.columns[col].candidate].bytes) *
                                 m.bytes_scale);
    }
  }
  // A row no column can cover enough, even all together, cannot be met.
  for (std::size_t r = 0; r < m.memory_rows.size(); ++r) {
    std::map<std::size_t, double> best_per_candidate;
    for (std::size_t k = 0; k < m.memory_rows[r].columns.size(); ++k) {
      auto cand = m.columns[m.memory_rows[r].columns[k]].candidate;
      best_per_candidate[cand] = std::max(best_per_candidate[cand], m.memory_rows[r].coefficients[k]);
    }
    double total = 0;
    for (const auto& [cand, v] : best_per_candidate) total += v;
    if (total + 1e-9 < m.memory_rows[r].lower) {
      m.infeasible = true;
      m.infeasible_step = seg_lo[r];
      break;
    }
  }
  return m;
}

}  // namespace memplan::solvers
