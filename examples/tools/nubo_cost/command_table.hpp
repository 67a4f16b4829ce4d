// nubo-cost's subcommands, each a row of the table main() runs.
#pragma once

#include <CLI/CLI.hpp>

#include "command.hpp"

namespace nubo_cost {

nubo_cli::Command catalog_command(CLI::App& app);  // catalog, and catalog update
nubo_cli::Command plan_command(CLI::App& app);
nubo_cli::Command schedule_command(CLI::App& app);
nubo_cli::Command checkpoint_command(CLI::App& app);
nubo_cli::Command own_command(CLI::App& app);
nubo_cli::Command scale_command(CLI::App& app);

}  // namespace nubo_cost
