// What pack packs: the sources expanded into entries (directories recursively, in byte order of
// names, so that the same tree always gives the same archive), with their metadata. Symlinks are
// entries of their own and never followed. A copy's walk (cp and sync to a store) follows them
// instead, as `aws s3 cp` does, or stores or skips them as asked (LinkRules).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "transfer/format/format.hpp"
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

enum class Symlinks;  // nubo/copy.hpp: follow (0), store, skip

struct LinkCounts {
  std::uint64_t followed = 0, stored = 0, skipped = 0;
};

// How a copy's walk treats a symlink below its root (the root itself, the user's, is always
// followed). Symlinks::follow: the entry becomes what the link leads to, under the link's path;
// a dangling link, a link that leaves the tree (unless follow_outside) and a link back to a
// folder being walked (a loop) are skipped with a warning. store: the link is an entry of its
// own. skip: left out. Each is counted in `counts`.
struct LinkRules {
  Symlinks mode{};  // follow
  bool follow_outside = false;
  LinkCounts* counts = nullptr;
};

// `skip` names files never to pack, typically the archive being written and its companions
// when the archive lies inside a source directory; `filter` leaves out what the user excluded;
// `links`: a copy's walk (nullptr: pack's, links kept as entries).
WalkResult walk_sources(const std::vector<std::string>& sources,
                        const std::vector<std::string>& skip, const PathFilter& filter = {},
                        const LinkRules* links = nullptr);

// Metadata of one path on this machine (lstat), under the archive name `archive_path`; nullopt
// for kinds that are not packed (sockets, devices, FIFOs).
std::optional<format::EntryMeta> stat_entry(const std::string& source_path,
                                            const std::string& archive_path);

}  // namespace nubo::transfer
