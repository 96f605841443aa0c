#include "solvers/ilp_model.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <string>
#include <tuple>

#include "solvers/model_eval.h"
#include "util/errors.h"

namespace memplan::solvers {

std::size_t IlpModel::nonzeros() const {
  std::size_t n = 0;
  for (const auto& c : columns) n += static_cast<std::size_t>(c.end_row - c.first_row);
  for (const auto& h : holds) n += static_cast<std::size_t>(h.end_row - h.first_row);
  return n;
}

namespace {

// The rows whose segment starts inside `span`: a boundary sits at every
// span's end, so the whole segment is inside too.
std::pair<int, int> rows_in(const IlpModel& m, const Interval& span) {
  if (span.empty()) return {0, 0};
  auto first = std::lower_bound(m.memory_step.begin(), m.memory_step.end(), span.begin);
  auto end = std::upper_bound(first, m.memory_step.end(), span.end);
  return {static_cast<int>(first - m.memory_step.begin()),
          static_cast<int>(end - m.memory_step.begin())};
}

// Per hold group and option of its input, a chain of IlpHolds (one per
// reader, in start order).
void add_holds(const Problem& p, IlpModel& m, const std::vector<int>& swap_col,
               const std::vector<int>& rec_col) {
  for (const auto& [first, end] : hold_groups(p)) {
    const ChainHold& head = p.holds[first];
    const Candidate& in = p.candidates[head.input];
    for (Decision d : {Decision::kSwap, Decision::kRecompute}) {
      const int col = d == Decision::kSwap ? swap_col[head.input] : rec_col[head.input];
      const Interval& gap = d == Decision::kSwap ? in.swap_gap : in.recompute_gap;
      if (col < 0 || gap.empty()) continue;
      const bool timed = p.holds_cost_time && d == Decision::kRecompute;
      int prev = -1;
      for (std::size_t h = first; h < end; ++h) {
        if (rec_col[p.holds[h].reader] < 0) continue;
        const std::int64_t stop = h + 1 < end ? p.holds[h + 1].held.begin - 1 : head.held.end;
        const Interval span =
            timed ? Interval{}
                  : Interval{std::max(gap.begin, p.holds[h].held.begin), std::min(gap.end, stop)};
        m.holds.push_back({rec_col[p.holds[h].reader], col, prev,
                           static_cast<double>(head.bytes) * m.bytes_scale, span});
        prev = static_cast<int>(m.holds.size()) - 1;
      }
      if (timed && prev >= 0)
        m.holds[static_cast<std::size_t>(prev)].seconds = in.recompute_seconds;
    }
  }
}

// Shared chain steps: the readers' recompute columns give the step's cost
// back (once per time they read it), and the step's own column pays it once.
void add_shared_steps(const Problem& p, IlpModel& m, const std::vector<int>& rec_col) {
  for (const SharedChainStep& step : p.shared_steps) {
    IlpShared s{step.seconds, {}};
    for (std::size_t r : step.readers) {
      if (rec_col[r] < 0) continue;
      m.columns[static_cast<std::size_t>(rec_col[r])].cost -= step.seconds;
      s.reader_cols.push_back(rec_col[r]);
    }
    std::sort(s.reader_cols.begin(), s.reader_cols.end());
    s.reader_cols.erase(std::unique(s.reader_cols.begin(), s.reader_cols.end()),
                        s.reader_cols.end());
    if (!s.reader_cols.empty()) m.shared.push_back(std::move(s));
  }
}

// A row no column can cover enough, even all together, cannot be met. A
// candidate counts once per row (its swap and recompute ranges may
// overlap), so add its bytes over the union of its ranges, by differences.
void mark_uncoverable(const Problem& p, const std::vector<std::uint64_t>& excess, IlpModel& m) {
  std::vector<std::int64_t> diff(excess.size() + 1, 0);
  auto add = [&](int first, int end, std::uint64_t bytes) {
    if (first >= end) return;
    diff[static_cast<std::size_t>(first)] += static_cast<std::int64_t>(bytes);
    diff[static_cast<std::size_t>(end)] -= static_cast<std::int64_t>(bytes);
  };
  for (std::size_t j = 0; j < m.columns.size(); ++j) {
    const IlpColumn& a = m.columns[j];
    const std::uint64_t bytes = p.candidates[a.candidate].bytes;
    const bool pair = j + 1 < m.columns.size() && m.columns[j + 1].candidate == a.candidate;
    if (!pair) {
      add(a.first_row, a.end_row, bytes);
      continue;
    }
    const IlpColumn& b = m.columns[++j];
    if (a.first_row >= a.end_row || b.first_row >= b.end_row || a.end_row < b.first_row ||
        b.end_row < a.first_row) {
      add(a.first_row, a.end_row, bytes);  // disjoint (or one empty): both count
      add(b.first_row, b.end_row, bytes);
    } else {
      add(std::min(a.first_row, b.first_row), std::max(a.end_row, b.end_row), bytes);
    }
  }
  std::int64_t covered = 0;
  for (std::size_t r = 0; r < excess.size(); ++r) {
    covered += diff[r];
    if (static_cast<std::uint64_t>(covered) < excess[r]) {
      m.infeasible = true;
      m.infeasible_step = m.memory_step[r];
      break;
    }
  }
}

std::vector<std::int64_t> segment_bounds(std::int64_t steps,
                                         const std::vector<const Interval*>& gaps,
                                         const std::vector<IlpHold>& holds) {
  std::vector<std::int64_t> cuts{0, steps};
  for (const Interval* gap : gaps) {
    cuts.push_back(gap->begin);
    cuts.push_back(gap->end + 1);
  }
  for (const IlpHold& h : holds) {
    if (h.span.empty()) continue;
    cuts.push_back(h.span.begin);
    cuts.push_back(h.span.end + 1);
  }
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  return cuts;
}

}  // namespace

IlpModel build_ilp_model(const Problem& p) {
  IlpModel m;
  std::vector<const Interval*> gap_of;  // per column
  std::vector<int> swap_col(p.candidates.size(), -1), rec_col(p.candidates.size(), -1);
  for (std::size_t i = 0; i < p.candidates.size(); ++i) {
    const Candidate& c = p.candidates[i];
    const double mib = static_cast<double>(c.bytes) * m.bytes_scale;
    if (c.can_swap) {
      swap_col[i] = static_cast<int>(m.columns.size());
      m.columns.push_back({i, Decision::kSwap, c.swap_exposed_seconds, mib});
      gap_of.push_back(&c.swap_gap);
    }
    if (c.can_recompute) {
      rec_col[i] = static_cast<int>(m.columns.size());
      m.columns.push_back({i, Decision::kRecompute, c.recompute_seconds, mib});
      gap_of.push_back(&c.recompute_gap);
    }
    if (swap_col[i] >= 0 && rec_col[i] >= 0) m.one_choice.emplace_back(swap_col[i], rec_col[i]);
  }
  add_holds(p, m, swap_col, rec_col);
  add_shared_steps(p, m, rec_col);

  // Segment boundaries: every gap's and hold span's begin and end + 1.
  const auto steps = static_cast<std::int64_t>(p.step_bytes.size());
  const std::vector<std::int64_t> cuts = segment_bounds(steps, gap_of, m.holds);

  // The largest excess in each segment; segments under budget get no row.
  std::vector<std::uint64_t> excess;  // bytes, per row
  for (std::size_t k = 0; k + 1 < cuts.size(); ++k) {
    std::int64_t lo = cuts[k], hi = cuts[k + 1] - 1;
    if (lo < 0 || lo >= steps) continue;
    std::uint64_t worst = 0;
    for (std::int64_t s = lo; s <= hi && s < steps; ++s) {
      worst = std::max(worst, p.step_bytes[static_cast<std::size_t>(s)]);
    }
    if (worst <= p.budget_bytes) continue;
    excess.push_back(worst - p.budget_bytes);
    m.memory_lower.push_back(static_cast<double>(worst - p.budget_bytes) * m.bytes_scale);
    m.memory_step.push_back(lo);
  }
  // Each column covers the rows whose segment starts inside its gap: a
  // boundary sits at every gap end, so the whole segment is inside too.
  for (std::size_t j = 0; j < m.columns.size(); ++j)
    std::tie(m.columns[j].first_row, m.columns[j].end_row) = rows_in(m, *gap_of[j]);
  for (IlpHold& h : m.holds) std::tie(h.first_row, h.end_row) = rows_in(m, h.span);
  mark_uncoverable(p, excess, m);
  return m;
}

double cut_slack(const LinkCut& cut) {
  return std::max(0.0, std::accumulate(cut.seconds.begin(), cut.seconds.end(), 0.0) - cut.capacity);
}

namespace {

// Per candidate, its coefficients in the cut rows, in row order.
std::vector<std::vector<std::pair<int, double>>> cut_entries(const IlpModel& m,
                                                             std::size_t candidates, double scale) {
  std::vector<std::vector<std::pair<int, double>>> by_candidate(candidates);
  for (std::size_t k = 0; k < m.link_cuts.size(); ++k) {
    const LinkCut& cut = m.link_cuts[k];
    for (std::size_t i = 0; i < cut.members.size(); ++i) {
      double v = cut.seconds[i];
      if (cut.members[i] == cut.last) v += cut_slack(cut);
      by_candidate[cut.members[i]].emplace_back(static_cast<int>(k), -v * scale);
    }
  }
  return by_candidate;
}

// Row bounds in ilp_arrays' row order.
void set_row_bounds(const IlpModel& m, const Problem& p, int n_choice, int first_hold,
                    IlpArrays& a) {
  constexpr double kInf = std::numeric_limits<double>::max();
  const double scale = m.seconds_scale;
  const int n_holds = static_cast<int>(m.holds.size());
  const int first_memory = n_choice + 2, first_cut = first_hold + 2 * n_holds;
  a.row_lower.assign(a.rows, -kInf);
  a.row_upper.assign(a.rows, kInf);
  for (int k = 0; k < n_choice; ++k) a.row_upper[k] = 1.0;
  a.row_lower[n_choice] = -p.forward_seconds * scale;
  a.row_lower[n_choice + 1] = -p.backward_seconds * scale;
  for (std::size_t r = 0; r < m.memory_lower.size(); ++r)
    a.row_lower[first_memory + r] = m.memory_lower[r];
  // x_reader + x_input - z <= 1; z_prev - z <= 0.
  for (int h = 0; h < n_holds; ++h) {
    a.row_upper[first_hold + 2 * h] = 1.0;
    a.row_upper[first_hold + 2 * h + 1] = 0.0;
  }
  for (std::size_t k = 0; k < m.link_cuts.size(); ++k) {
    const LinkCut& cut = m.link_cuts[k];
    a.row_lower[first_cut + static_cast<int>(k)] = -(cut.capacity + cut_slack(cut)) * scale;
  }
}

// Per binary, the hold rows it appears in (ascending) and its coefficient
// there: 2 when a coarse group holds its own member.
std::vector<std::vector<std::pair<int, double>>> hold_rows_by_column(const IlpModel& m,
                                                                     int first_hold) {
  std::vector<std::vector<std::pair<int, double>>> rows(m.columns.size());
  for (std::size_t h = 0; h < m.holds.size(); ++h) {
    const IlpHold& x = m.holds[h];
    const int row = first_hold + 2 * static_cast<int>(h);
    if (x.reader_col == x.input_col) {
      rows[static_cast<std::size_t>(x.reader_col)].emplace_back(row, 2.0);
      continue;
    }
    rows[static_cast<std::size_t>(x.reader_col)].emplace_back(row, 1.0);
    rows[static_cast<std::size_t>(x.input_col)].emplace_back(row, 1.0);
  }
  return rows;
}

// One entry of the column being written.
void put_entry(IlpArrays& a, int row, double v) {
  a.index.push_back(row);
  a.value.push_back(v);
}

// A hold's column: -MiB in the memory rows of its span, -1 in its own two
// rows, +1 in the chain row of the hold after it.
void put_hold_columns(const IlpModel& m, int first_memory, int first_hold, IlpArrays& a) {
  const int n_holds = static_cast<int>(m.holds.size());
  auto put = [&](int row, double v) { put_entry(a, row, v); };
  for (int h = 0; h < n_holds; ++h) {
    const IlpHold& x = m.holds[h];
    a.starts.push_back(static_cast<int>(a.index.size()));
    for (int r = x.first_row; r < x.end_row; ++r) put(first_memory + r, -x.mib);
    put(first_hold + 2 * h, -1.0);
    if (x.prev >= 0) put(first_hold + 2 * h + 1, -1.0);
    if (h + 1 < n_holds && m.holds[h + 1].prev == h) put(first_hold + 2 * h + 3, 1.0);
  }
}

// Per binary, the shared-step rows it appears in (ascending): w - x >= 0.
std::vector<std::vector<int>> shared_rows_by_column(const IlpModel& m, int first_shared) {
  std::vector<std::vector<int>> rows(m.columns.size());
  int row = first_shared;
  for (const IlpShared& s : m.shared)
    for (int col : s.reader_cols) rows[static_cast<std::size_t>(col)].push_back(row++);
  return rows;
}

// A shared step's column: +1 in each of its rows, its seconds in the objective.
void put_shared_columns(const IlpModel& m, int first_shared, int first_col, IlpArrays& a) {
  int row = first_shared;
  for (std::size_t k = 0; k < m.shared.size(); ++k) {
    a.starts.push_back(static_cast<int>(a.index.size()));
    for (std::size_t r = 0; r < m.shared[k].reader_cols.size(); ++r) put_entry(a, row++, 1.0);
    const int col = first_col + static_cast<int>(k);
    a.col_upper[col] = 1.0;
    a.objective[col] = m.shared[k].seconds * m.seconds_scale;
  }
}

}  // namespace

std::size_t shared_rows(const IlpModel& m) {
  std::size_t n = 0;
  for (const IlpShared& s : m.shared) n += s.reader_cols.size();
  return n;
}

namespace {

// Where each block of rows and columns starts (ilp_arrays' order).
struct ArrayLayout {
  int n_bin, n_choice, row_out, row_in, first_memory, n_holds, first_hold, first_cut, n_cuts,
      first_shared, n_shared_rows;
  explicit ArrayLayout(const IlpModel& m)
      : n_bin(static_cast<int>(m.columns.size())),
        n_choice(static_cast<int>(m.one_choice.size())),
        row_out(n_choice),
        row_in(n_choice + 1),
        first_memory(n_choice + 2),
        n_holds(static_cast<int>(m.holds.size())),
        first_hold(first_memory + static_cast<int>(m.memory_lower.size())),
        first_cut(first_hold + 2 * n_holds),
        n_cuts(static_cast<int>(m.link_cuts.size())),
        first_shared(first_cut + n_cuts),
        n_shared_rows(static_cast<int>(shared_rows(m))) {}
};

// The binaries' columns: one_choice row, link rows (swaps), memory rows,
// hold rows, cut rows (swaps), shared-step rows (recomputes).
void put_binary_columns(const IlpModel& m, const Problem& p, const ArrayLayout& l, IlpArrays& a) {
  const double scale = m.seconds_scale;
  const auto cuts = cut_entries(m, p.candidates.size(), scale);
  const auto hold_rows = hold_rows_by_column(m, l.first_hold);
  const auto shared = shared_rows_by_column(m, l.first_shared);
  std::vector<int> choice_row(l.n_bin, -1);
  for (int k = 0; k < l.n_choice; ++k) {
    choice_row[m.one_choice[k].first] = k;
    choice_row[m.one_choice[k].second] = k;
  }
  auto put = [&](int row, double v) { put_entry(a, row, v); };
  for (int j = 0; j < l.n_bin; ++j) {
    const IlpColumn& c = m.columns[j];
    a.starts.push_back(static_cast<int>(a.index.size()));
    a.objective[j] = c.cost * scale;
    if (choice_row[j] >= 0) put(choice_row[j], 1.0);
    // Link excess: e >= sum(transfer x) - hiding compute time.
    if (c.choice == Decision::kSwap) {
      put(l.row_out, -p.candidates[c.candidate].swap_out_seconds * scale);
      put(l.row_in, -p.candidates[c.candidate].swap_in_seconds * scale);
    }
    for (int r = c.first_row; r < c.end_row; ++r) put(l.first_memory + r, c.mib);
    for (const auto& [r, v] : hold_rows[j]) put(r, v);
    if (c.choice == Decision::kSwap)
      for (const auto& [k, v] : cuts[c.candidate]) put(l.first_cut + k, v);
    for (int r : shared[j]) put(r, -1.0);
  }
}

}  // namespace

IlpArrays ilp_arrays(const IlpModel& m, const Problem& p) {
  constexpr double kInf = std::numeric_limits<double>::max();
  const ArrayLayout l(m);
  const int n_shared = static_cast<int>(m.shared.size());
  IlpArrays a;
  a.cols = l.n_bin + 2 + l.n_holds + l.n_cuts + n_shared;
  a.rows = l.first_shared + l.n_shared_rows;
  // Size everything once: the point is to never reallocate.
  std::size_t nnz = 2 * l.n_choice + 2 + m.nonzeros() + 5 * static_cast<std::size_t>(l.n_holds) +
                    static_cast<std::size_t>(l.n_cuts) +
                    2 * static_cast<std::size_t>(l.n_shared_rows);
  for (const auto& cut : m.link_cuts) nnz += cut.members.size();
  for (const auto& c : m.columns) nnz += c.choice == Decision::kSwap ? 2 : 0;
  if (nnz > static_cast<std::size_t>(std::numeric_limits<int>::max()))
    throw InputError("the ILP has " + std::to_string(nnz) +
                     " nonzeros, more than Cbc can index; it must be coarsened further");
  a.starts.reserve(a.cols + 1);
  a.index.reserve(nnz);
  a.value.reserve(nnz);
  a.col_lower.assign(a.cols, 0.0);
  a.col_upper.assign(a.cols, 1.0);
  a.objective.assign(a.cols, 1.0);
  put_binary_columns(m, p, l, a);
  for (int k = 0; k < 2; ++k) {  // e_out, e_in
    a.starts.push_back(static_cast<int>(a.index.size()));
    put_entry(a, l.row_out + k, 1.0);
  }
  put_hold_columns(m, l.first_memory, l.first_hold, a);
  for (int k = 0; k < l.n_cuts; ++k) {
    a.starts.push_back(static_cast<int>(a.index.size()));
    put_entry(a, l.first_cut + k, 1.0);
  }
  const int first_shared_col = l.n_bin + 2 + l.n_holds + l.n_cuts;
  for (int j = l.n_bin; j < first_shared_col; ++j) a.col_upper[j] = kInf;
  for (int h = 0; h < l.n_holds; ++h) {
    const IlpHold& z = m.holds[static_cast<std::size_t>(h)];
    a.col_upper[l.n_bin + 2 + h] = 1.0;
    a.objective[l.n_bin + 2 + h] = z.seconds * m.seconds_scale;
  }
  put_shared_columns(m, l.first_shared, first_shared_col, a);
  a.starts.push_back(static_cast<int>(a.index.size()));

  set_row_bounds(m, p, l.n_choice, l.first_hold, a);
  for (int r = 0; r < l.n_shared_rows; ++r) a.row_lower[l.first_shared + r] = 0.0;
  return a;
}

}  // namespace memplan::solvers
