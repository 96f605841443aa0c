#pragma once
// Cbc's standalone driver (CbcMain1) on a loaded model, as both MILPs run
// it: wall-clock limit, threads, no log, preprocessing optional.
#include <CbcModel.hpp>

namespace memplan::solvers {

// CbcMain1 installs a SIGINT handler of its own and leaves it there: the
// caller's handler is put back before this returns.
// cuts_at_root_only: Cbc's cut generators at the root node only (Checkmate's
// MILP: a 22-node chain proved in 14 s instead of 29, a 34-node one in 26
// instead of 39).
void run_cbc_main(CbcModel& model, double seconds, int threads, bool preprocess,
                  bool cuts_at_root_only = false);

}  // namespace memplan::solvers
