#include "selection.hpp"

#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli.hpp"
#include "nubo/error.hpp"
#include "nubo/transfer.hpp"
#include "nubo/units.hpp"

namespace nubo_xfer {

namespace xfer = nubo::transfer;

void add_selection(CLI::App* cmd, Selection& s) {
  cmd->add_option("--exclude", s.exclude,
                  "leave out what matches PATTERN (repeatable; as rsync: '*.tmp', 'logs/', "
                  "'/top/dir')");
  cmd->add_option("--include", s.include,
                  "keep what matches PATTERN although an --exclude matches it (repeatable)");
  cmd->add_flag("--dry-run,-n", s.dry_run, "list what would be taken, and do nothing");
}

int dry_run(const std::vector<std::string>& sources, const Selection& s, const char* verb,
            bool json) {
  auto entries = xfer::select(sources, s.exclude, s.include);
  std::uint64_t files = 0, bytes = 0;
  auto out = nlohmann::json::array();
  for (const auto& e : entries) {
    if (e.kind == xfer::EntryKind::file) {
      ++files;
      bytes += e.size;
    }
    if (json) {
      out.push_back({{"path", e.path},
                     {"kind", xfer::entry_kind_name(e.kind)},
                     {"size", e.size},
                     {"mode", e.mode}});
    } else {
      std::printf("%s%s\n", nubo::printable(e.path).c_str(),
                  e.kind == xfer::EntryKind::directory ? "/" : "");
    }
  }
  if (json) std::cout << out.dump(2) << "\n";
  std::fprintf(stderr, "nubo-xfer: dry run: would %s %s, %s, %s\n", verb,
               nubo_cli::count_of(entries.size(), "entry", "entries").c_str(),
               nubo_cli::count_of(files, "file").c_str(),
               nubo::format_bytes(static_cast<double>(bytes), 2).c_str());
  return 0;
}

}  // namespace nubo_xfer
