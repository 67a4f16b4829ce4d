// --exclude, --include and --dry-run, shared by pack and send: the filter options, and what a
// dry run prints (the entries that would be taken, then a summary), writing and sending nothing.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace nubo_xfer {

struct Selection {
  std::vector<std::string> exclude, include;
  bool dry_run = false;
};

void add_selection(CLI::App* cmd, Selection& s);
// Prints what `verb` ("pack", "send") would take from `sources`: paths on stdout (or a JSON
// array with `json`), and a summary on stderr. Returns the exit status (0).
int dry_run(const std::vector<std::string>& sources, const Selection& s, const char* verb,
            bool json);

}  // namespace nubo_xfer
