// What the archive commands of nubo-xfer share: the flags of a pipeline (threads, memory, quiet,
// json) and the summary they print.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "nubo/transfer.hpp"

namespace nubo_xfer {

// Options shared by the subcommands, as given on the command line.
struct Common {
  int threads = 0;
  std::string memory = "64M";
  bool json = false;
  bool quiet = false;
};

// Adds the flags; `pipeline`: the ones of a command that packs or unpacks (threads, memory,
// quiet), not only --json.
void add_common(CLI::App* cmd, Common& c, bool pipeline);

// The summary: JSON on stdout with --json, else a line on stderr unless --quiet.
void report(const std::string& operation, const nubo::transfer::Summary& s, const Common& c);

}  // namespace nubo_xfer
