#pragma once
// docs/model.md as a mixed-integer program, in plain arrays: column j of
// `columns` is candidate `columns[j].candidate` taking `columns[j].choice`.
#include <cstdint>
#include <vector>

#include "solvers/decision.h"
#include "solvers/link_queue.h"
#include "solvers/problem.h"

namespace memplan::solvers {

struct IlpColumn {
  std::size_t candidate = 0;
  Decision choice = Decision::kSwap;
  double cost = 0;  // seconds
  double mib = 0;   // its coefficient in every memory row it covers
  // Memory rows are in step order and a column covers the segments inside
  // its gap, so the rows it appears in are one range [first_row, end_row).
  int first_row = 0;
  int end_row = 0;
};

// Chain holds (problem.h) of one tensor, for one option of its input: a
// chain of continuous columns, one per reader in start order, each for the
// steps from its reader's start to the next one's. z_j >= x_reader_j +
// x_input - 1 and z_j >= z_{j-1}, so z_j = 1 exactly when the input takes
// that option and some reader up to j is recomputed; z_j gives the input's
// MiB back in the memory rows of its span.
struct IlpHold {
  int reader_col = 0;  // the reader's recompute column
  int input_col = 0;   // the input's swap or recompute column
  int prev = -1;       // the hold before it in its chain
  double mib = 0;
  Interval span;  // the steps it gives memory back over (may be empty)
  int first_row = 0;
  int end_row = 0;
  // Holds that cost time (Problem::holds_cost_time): no span, and the last
  // column of the chain costs the input's recompute seconds.
  double seconds = 0;
};

// A shared chain step (problem.h): a continuous column w >= x_reader for
// each reader's recompute column, at the step's cost, while the readers'
// recompute columns cost that much less each; so the step is paid once when
// any reader is recomputed.
struct IlpShared {
  double seconds = 0;
  std::vector<int> reader_cols;  // distinct recompute columns
};

struct IlpModel {
  std::vector<IlpColumn> columns;  // binaries; then two continuous link-excess columns
  std::vector<IlpHold> holds;      // then one continuous column each
  // One memory row per segment of steps over budget: sum >= lower (MiB).
  std::vector<double> memory_lower;
  std::vector<std::int64_t> memory_step;         // first step of each row's segment
  std::vector<std::pair<int, int>> one_choice;   // x_swap + x_recompute <= 1
  double bytes_scale = 1.0 / (1024.0 * 1024.0);  // coefficients in MiB
  // Times in microseconds: Cbc's tolerances are absolute, and overheads of
  // a few hundred microseconds would vanish inside them in seconds.
  double seconds_scale = 1e6;
  // Queueing cuts (link_queue.h), added round by round from replays of the
  // ILP's own answers: each a row and a continuous wait column.
  std::vector<LinkCut> link_cuts;
  std::vector<IlpShared> shared;  // after the link cuts: a column each, a row per reader
  bool infeasible = false;        // some step cannot be brought under budget at all
  std::int64_t infeasible_step = -1;
  std::size_t nonzeros() const;  // entries of the memory rows (holds' included)
};

// Memory rows are compressed: steps between consecutive gap boundaries are
// covered by the same columns, so one row (the largest excess) stands for
// all of them; steps already under budget get none. O(C log C + S).
IlpModel build_ilp_model(const Problem& problem);

// The whole program as column-major (CSC) arrays, so a solver loads it in
// one call instead of growing a matrix row by row. Rows: the one_choice
// rows, the d2h then the h2d link row, the memory rows, then two rows per
// hold, then one row per link cut, then one per shared step and reader;
// columns: the binaries, then e_out and e_in, then one per hold, then one
// wait per link cut, then one per shared step. Row indices ascend within
// every column.
struct IlpArrays {
  int rows = 0;
  int cols = 0;
  std::vector<int> starts;  // cols + 1 offsets into `index` / `value`
  std::vector<int> index;   // row of each entry
  std::vector<double> value;
  std::vector<double> col_lower, col_upper, objective;
  std::vector<double> row_lower, row_upper;  // infinite: +-DBL_MAX
};

// Throws InputError when the program has more entries than an int counts
// (the caller coarsens long before that).
IlpArrays ilp_arrays(const IlpModel& model, const Problem& problem);

// The rows of the shared chain steps: one per step and reader column.
std::size_t shared_rows(const IlpModel& model);

// A cut's row: sum(seconds x) + slack * x_last - wait <= capacity + slack,
// where slack = the most the members could overrun, so the row binds only
// when `last` is swapped.
double cut_slack(const LinkCut& cut);

}  // namespace memplan::solvers
