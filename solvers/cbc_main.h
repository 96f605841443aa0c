#pragma once
// Cbc's standalone driver (CbcMain1) on a loaded model, as both MILPs run
// it: wall-clock limit, threads, no log, preprocessing optional.
#include <CbcModel.hpp>

namespace memplan::solvers {

struct CbcRun {
  double seconds = 60;  // wall clock
  int threads = 1;
  bool preprocess = true;
  // Cbc's cut generators at the root node only (Checkmate's MILP: a 22-node
  // chain proved in 14 s instead of 29, a 34-node one in 26 instead of 39).
  bool cuts_at_root_only = false;
  // Branch-and-bound nodes at most, 0 for no limit: a limit of work rather
  // than time, so that the answer does not depend on how fast the machine is.
  int max_nodes = 0;
};

// CbcMain1 installs a SIGINT handler of its own and leaves it there: the
// caller's handler is put back before this returns.
void run_cbc_main(CbcModel& model, const CbcRun& run);

}  // namespace memplan::solvers
