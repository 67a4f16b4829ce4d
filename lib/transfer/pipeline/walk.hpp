// What pack packs: the sources expanded into entries (directories recursively, in byte order of
// names, so that the same tree always gives the same archive), with their metadata. Symlinks are
// entries of their own and never followed.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "transfer/archive/format.hpp"
#include "transfer/pipeline/filter.hpp"

namespace nubo::transfer {

struct SourceEntry {
  std::string source_path;  // where it is on this machine
  format::EntryMeta meta;   // as it goes into the archive
};

struct WalkResult {
  std::vector<SourceEntry> entries;
  std::uint64_t bytes = 0;  // content bytes of the files
};

// `skip` names files never to pack, typically the archive being written and its companions
// when the archive lies inside a source directory; `filter` leaves out what the user excluded.
WalkResult walk_sources(const std::vector<std::string>& sources,
                        const std::vector<std::string>& skip, const PathFilter& filter = {});

// Metadata of one path on this machine (lstat), under the archive name `archive_path`; nullopt
// for kinds that are not packed (sockets, devices, FIFOs).
std::optional<format::EntryMeta> stat_entry(const std::string& source_path,
                                            const std::string& archive_path);

}  // namespace nubo::transfer
