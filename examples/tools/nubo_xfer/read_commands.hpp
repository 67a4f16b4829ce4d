// nubo-xfer list and cat: the commands that only read an archive.
#pragma once

#include <CLI/CLI.hpp>

#include "command.hpp"

namespace nubo_xfer {

nubo_cli::Command list_command(CLI::App& app);
nubo_cli::Command cat_command(CLI::App& app);

}  // namespace nubo_xfer
