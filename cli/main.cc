#include <iostream>

#include "cli/commands.h"
#include "util/errors.h"

int main(int argc, char** argv) {
  CLI::App app{"memplan: offline memory planner for ONNX training graphs"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "memplan 0.1.0");
  memplan::cli::add_inspect_command(app);
  memplan::cli::add_devices_command(app);
  memplan::cli::add_plan_command(app);
  memplan::cli::add_compare_command(app);
  memplan::cli::add_maxbatch_command(app);
  memplan::cli::add_simulate_command(app);
  memplan::cli::add_validate_command(app);
  memplan::cli::add_run_command(app);
  memplan::cli::add_rewrite_command(app);
  memplan::cli::add_explain_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return static_cast<int>(memplan::ExitCode::kUsage);
  } catch (const memplan::Error& e) {
    std::cerr << "memplan: error: " << e.what() << "\n";
    return static_cast<int>(e.code());
  } catch (const std::bad_alloc&) {
    std::cerr << "memplan: error: out of memory\n";
    return static_cast<int>(memplan::ExitCode::kBadInput);
  } catch (const std::exception& e) {
    std::cerr << "memplan: error: " << e.what() << "\n";
    return static_cast<int>(memplan::ExitCode::kBadInput);
  }
  return 0;
}
