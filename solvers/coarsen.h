#pragma once
// Fewer, larger candidates for graphs too big for the exact ILP: runs of
// consecutive candidates (in forward order, same allowed options) become
// one group that is kept, swapped or recomputed as a whole.
#include <cstddef>
#include <vector>

#include "solvers/decision.h"
#include "solvers/problem.h"

namespace memplan::solvers {

struct Coarsened {
  Problem problem;                                // one candidate per group
  std::vector<std::vector<std::size_t>> members;  // group -> fine candidates
};

// A group frees memory only where every member does (the intersection of
// the windows), and costs the sum of its members, so every assignment of
// the coarse problem that fits is an assignment of the fine one that fits.
//
// With `mix_options`, runs also take candidates with other options: a group
// keeps only the options all its members allow (and whose windows still
// intersect). Coarser and cruder; for when plain runs leave too many groups.
Coarsened coarsen(const Problem& problem, std::size_t max_groups, bool mix_options = false);

// The fine assignment a coarse one stands for.
std::vector<Decision> expand(const Coarsened& c, const std::vector<Decision>& coarse_choice,
                             std::size_t fine_candidates);

}  // namespace memplan::solvers
