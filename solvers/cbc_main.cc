#include "solvers/cbc_main.h"

#include <CbcSolver.hpp>
#include <csignal>
#include <string>
#include <vector>

namespace memplan::solvers {

void run_cbc_main(CbcModel& model, double seconds, int threads, bool preprocess,
                  bool cuts_at_root_only) {
  std::vector<std::string> text = {
      "memplan-cbc",           "-timeMode", "elapsed", "-sec", std::to_string(seconds), "-threads",
      std::to_string(threads), "-log",      "0"};
  if (!preprocess) text.insert(text.end(), {"-preprocess", "off"});
  if (cuts_at_root_only) text.insert(text.end(), {"-cuts", "root"});
  text.insert(text.end(), {"-solve", "-quit"});
  std::vector<const char*> argv;
  for (const std::string& t : text) argv.push_back(t.c_str());
  struct sigaction callers_handler {};
  sigaction(SIGINT, nullptr, &callers_handler);
  CbcMain1(static_cast<int>(argv.size()), argv.data(), model);
  sigaction(SIGINT, &callers_handler, nullptr);
}

}  // namespace memplan::solvers
