// nubo-xfer pack, unpack, verify, keygen and policy: the commands that make, restore, check or
// protect archives.
#pragma once

#include <CLI/CLI.hpp>

#include "command.hpp"

namespace nubo_xfer {

nubo_cli::Command pack_command(CLI::App& app);
nubo_cli::Command unpack_command(CLI::App& app);
nubo_cli::Command verify_command(CLI::App& app);
nubo_cli::Command keygen_command(CLI::App& app);
nubo_cli::Command policy_command(CLI::App& app);

}  // namespace nubo_xfer
