#include "solvers/cbc_main.h"

#include <CbcSolver.hpp>
#include <csignal>
#include <string>
#include <vector>

namespace memplan::solvers {

void run_cbc_main(CbcModel& model, const CbcRun& run) {
  std::vector<std::string> text = {"memplan-cbc",
                                   "-timeMode",
                                   "elapsed",
                                   "-sec",
                                   std::to_string(run.seconds),
                                   "-threads",
                                   std::to_string(run.threads),
                                   "-log",
                                   "0"};
  if (!run.preprocess) text.insert(text.end(), {"-preprocess", "off"});
  if (run.cuts_at_root_only) text.insert(text.end(), {"-cuts", "root"});
  if (run.max_nodes > 0) text.insert(text.end(), {"-maxNodes", std::to_string(run.max_nodes)});
  text.insert(text.end(), {"-solve", "-quit"});
  std::vector<const char*> argv;
  for (const std::string& t : text) argv.push_back(t.c_str());
  struct sigaction callers_handler {};
  sigaction(SIGINT, nullptr, &callers_handler);
  CbcMain1(static_cast<int>(argv.size()), argv.data(), model);
  sigaction(SIGINT, &callers_handler, nullptr);
}

}  // namespace memplan::solvers
