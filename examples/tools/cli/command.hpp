// A tool's subcommands as a table: each row adds its subcommand and flags to the tool's app and
// says whether it was given and how to run it, so that a tool's main() lists its commands,
// parses, and runs the one given.
#pragma once

#include <functional>
#include <vector>

namespace nubo_cli {

struct Command {
  std::function<bool()> parsed;  // this subcommand was on the command line
  std::function<int()> run;      // its work, once parsed; the exit status
  // It only reads (list, cat): a stop signal ends it at once, with nothing to finish.
  bool only_reads = false;
};

// The command of `table` that was given; nullptr when none was (CLI11 requires one).
inline const Command* given(const std::vector<Command>& table) {
  for (const auto& c : table)
    if (c.parsed()) return &c;
  return nullptr;
}

}  // namespace nubo_cli
