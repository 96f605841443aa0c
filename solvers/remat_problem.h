#pragma once
// Rematerialization as Checkmate states it (Jain et al., MLSys 2020): a DAG
// of nodes in a topological order, each making one value of some bytes at
// some cost; a schedule runs nodes (a node may run several times, its inputs
// resident), frees values between runs, and ends with every node run at
// least once and the graph's outputs resident. Memory while a node runs is
// the resident values plus its output, plus a base that never moves (graph
// inputs, initializers). The exact solvers over it are the MILP
// (remat_milp.h) and, in tests, an enumeration of schedules.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "ir/costs.h"
#include "ir/graph.h"

namespace memplan::solvers {

struct RematNode {
  double seconds = 0;
  std::uint64_t bytes = 0;
  std::vector<std::size_t> inputs;  // earlier nodes, each once
  bool output = false;              // resident from its first run to the end
  // Runs only once: random (a dropout remade from its mask is too, in
  // memplan's own plans, but its value here holds the mask as well), writes
  // an input in place, or reads a tensor that some node writes in place (a
  // second run could read it after the write).
  bool recomputable = true;
};

struct RematProblem {
  std::vector<RematNode> nodes;  // topological
  std::uint64_t base_bytes = 0;
  std::uint64_t budget_bytes = 0;

  double compute_seconds() const;  // every node once
};

// The graph's nodes in its order, a node's outputs taken as one value (they
// are made together; a value with no bytes is fine). Reads of graph inputs
// and initializers go to the base. Throws InputError for a graph whose
// node order is not topological.
RematProblem remat_problem(const ir::Graph& graph, const ir::NodeCosts& costs,
                           std::uint64_t budget_bytes);

// A sequence of runs, replayed with each value freed right after its last
// read before it is made again (or never read again), outputs never: the
// least memory that sequence can take. A second run of a node that is not
// recomputable is an error.
// free_after[p]: the values that run p is the last reader (or the maker)
// of before they are made again or the runs end; outputs never. `runs`
// must name nodes of the problem.
std::vector<std::vector<std::size_t>> eager_frees(const RematProblem& problem,
                                                  std::span<const std::size_t> runs);

struct RematReplay {
  std::string error;             // the first broken rule, naming the run; empty if valid
  std::uint64_t peak_bytes = 0;  // with the base
  double seconds = 0;
};
RematReplay replay(const RematProblem& problem, std::span<const std::size_t> runs);

}  // namespace memplan::solvers
