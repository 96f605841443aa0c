#include "solvers/evictions.h"

#include "solvers/model_eval.h"

namespace memplan::solvers {

void restrict_evictions(Problem& problem, Evictions evictions, std::vector<Decision>* warm_start) {
  for (Candidate& c : problem.candidates) {
    c.can_swap = c.can_swap && evictions.swap;
    c.can_recompute = c.can_recompute && evictions.recompute;
  }
  if (warm_start == nullptr || warm_start->size() != problem.candidates.size()) return;
  for (std::size_t i = 0; i < problem.candidates.size(); ++i)
    if (!allowed(problem.candidates[i], (*warm_start)[i])) (*warm_start)[i] = Decision::kKeep;
}

}  // namespace memplan::solvers
