#pragma once
// docs/model.md as a mixed-integer program, in plain arrays: column j of
// `columns` is candidate `columns[j].candidate` taking `columns[j].choice`.
#include <cstdint>
#include <vector>

#include "solvers/decision.h"
#include "solvers/problem.h"

namespace memplan::solvers {

struct IlpColumn {
  std::size_t candidate = 0;
  Decision choice = Decision::kSwap;
  double cost = 0;
};

struct IlpRow {
  std::vector<int> columns;  // indices into IlpModel::columns (binaries)
  std::vector<double> coefficients;
  double lower = 0;  // sum >= lower
};

struct IlpModel {
  std::vector<IlpColumn> columns;  // binaries; then two continuous link-excess columns
  std::vector<IlpRow> memory_rows;  // one per segment of steps over budget
  std::vector<std::pair<int, int>> one_choice;  // x_swap + x_recompute <= 1
  double bytes_scale = 1.0 / (1024.0 * 1024.0);  // coefficients in MiB
  bool infeasible = false;  // some step cannot be brought under budget at all
  std::int64_t infeasible_step = -1;
  std::size_t nonzeros() const;
};

// Memory rows are compressed: steps between consecutive gap boundaries are
// covered by the same columns, so one row (the largest excess) stands for
// all of them; steps already under budget get none.
IlpModel build_ilp_model(const Problem& problem);

}  // namespace memplan::solvers
