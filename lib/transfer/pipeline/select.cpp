// nubo::transfer::select: what pack and send would take from their sources (--dry-run), and
// the conversion of an entry's metadata to the public Entry that list shares.
#include "nubo/transfer.hpp"
#include "transfer/archive/entries.hpp"
#include "transfer/pipeline/walk.hpp"

namespace nubo::transfer {

Entry entry_of(const format::EntryMeta& meta) {
  Entry x;
  x.path = meta.path;
  x.kind = static_cast<EntryKind>(meta.kind);
  x.size = meta.size;
  x.mode = meta.mode;
  x.mtime_ns = meta.mtime_ns;
  x.link_target = meta.link_target;
  return x;
}

std::vector<Entry> select(const std::vector<std::string>& sources,
                          const std::vector<std::string>& exclude,
                          const std::vector<std::string>& include) {
  auto walk = walk_sources(sources, {}, PathFilter(exclude, include));
  std::vector<Entry> out;
  out.reserve(walk.entries.size());
  for (const auto& e : walk.entries) out.push_back(entry_of(e.meta));
  return out;
}

}  // namespace nubo::transfer
