// nubo-xfer cp and sync (docs/s3.md): files and trees to, from and between object stores.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <memory>
#include <string>

#include "command.hpp"
#include "key_option.hpp"
#include "selection.hpp"

namespace nubo_xfer {

struct CpCommand {
  CLI::App* app = nullptr;
  std::string from, to, part_size = "0", rate = "0", profile, sse, kms_key_id;
  std::string source_profile, dest_profile;  // copies between stores
  std::string encrypt;                       // uploads: a key file or kms:KEY
  ReadKey read_key;                          // downloads: --key, --kms-region
  int streams = 4;
  bool keep_partial = false, no_sync = false, json = false, quiet = false;
  bool links = false, no_follow = false, follow_outside = false;  // symlinks in local trees
  bool delete_extra = false, dry_run = false;                     // sync
  bool allow_empty_source = false;                                // sync --delete
  std::int64_t max_delete = -1;
  std::string backup_dir;
  Selection selection;  // --exclude, --include (uploads)
};

// cp and sync as rows of the command table.
nubo_cli::Command cp_command(CLI::App& app);
nubo_cli::Command sync_command(CLI::App& app);

}  // namespace nubo_xfer
