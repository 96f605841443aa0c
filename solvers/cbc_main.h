#pragma once
// Cbc's standalone driver (CbcMain1) on a loaded model, as both MILPs run
// it: wall-clock limit, threads, no log, preprocessing optional.
#include <CbcModel.hpp>

namespace memplan::solvers {

// CbcMain1 installs a SIGINT handler of its own and leaves it there: the
// caller's handler is put back before this returns.
void run_cbc_main(CbcModel& model, double seconds, int threads, bool preprocess);

}  // namespace memplan::solvers
