#pragma once
// Each subcommand registers itself on the app; its callback throws
// memplan::Error on failure and `main` turns that into one line + exit code.
#include <CLI/CLI.hpp>

namespace memplan::cli {

void add_inspect_command(CLI::App& app);
void add_devices_command(CLI::App& app);
void add_plan_command(CLI::App& app);
void add_compare_command(CLI::App& app);
void add_maxbatch_command(CLI::App& app);
void add_simulate_command(CLI::App& app);
void add_validate_command(CLI::App& app);
void add_run_command(CLI::App& app);
void add_rewrite_command(CLI::App& app);
void add_explain_command(CLI::App& app);

}  // namespace memplan::cli
