#include "support/run_command.h"

#include <sys/wait.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "support/model_builder.h"

namespace memplan::test {

CommandResult run_memplan(const std::string& args) {
  std::string out_path = temp_path("stdout.txt");
  std::string err_path = temp_path("stderr.txt");
  std::string cmd =
      std::string(MEMPLAN_BINARY) + " " + args + " >" + out_path + " 2>" + err_path + " </dev/null";
  int status = std::system(cmd.c_str());
  CommandResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  auto slurp = [](const std::string& p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  };
  r.out = slurp(out_path);
  r.err = slurp(err_path);
  return r;
}

}  // namespace memplan::test
