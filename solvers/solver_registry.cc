#include "solvers/solver_registry.h"

#include "solvers/baseline_solvers.h"
#include "solvers/greedy_solver.h"
#include "solvers/ilp_solver.h"
#include "util/errors.h"

namespace memplan::solvers {

std::vector<std::string> solver_names() {
  return {"greedy", "ilp", "chen-sqrt", "recompute-greedy", "recompute-ilp", "vdnn", "atp"};
}

std::unique_ptr<Solver> make_solver(std::string_view name) {
  if (name == "greedy") return std::make_unique<GreedySolver>();
  if (name == "ilp") return std::make_unique<IlpSolver>();
  if (name == "chen-sqrt") return std::make_unique<ChenSqrtSolver>();
  if (name == "vdnn") return std::make_unique<VdnnSolver>();
  if (name == "atp") return std::make_unique<AtpSolver>();
  if (name == "recompute-greedy")
    return std::make_unique<RestrictedSolver>(std::make_unique<GreedySolver>(),
                                              Evictions::recompute_only(), "recompute-greedy");
  if (name == "recompute-ilp")
    return std::make_unique<RestrictedSolver>(std::make_unique<IlpSolver>(),
                                              Evictions::recompute_only(), "recompute-ilp");
  std::string known;
  for (const auto& n : solver_names()) known += (known.empty() ? "" : ", ") + n;
  throw UsageError("unknown solver '" + std::string(name) + "'; known: auto, " + known +
                   ", dtr, checkmate");
}

}  // namespace memplan::solvers
