// nubo::transfer::select: what pack and send would take from their sources (--dry-run).
#include "nubo/transfer.hpp"
#include "transfer/walk.hpp"

namespace nubo::transfer {

std::vector<Entry> select(const std::vector<std::string>& sources,
                          const std::vector<std::string>& exclude,
                          const std::vector<std::string>& include) {
  auto walk = walk_sources(sources, {}, PathFilter(exclude, include));
  std::vector<Entry> out;
  out.reserve(walk.entries.size());
  for (const auto& e : walk.entries) {
    Entry x;
    x.path = e.meta.path;
    x.kind = static_cast<EntryKind>(e.meta.kind);
    x.size = e.meta.size;
    x.mode = e.meta.mode;
    x.mtime_ns = e.meta.mtime_ns;
    x.link_target = e.meta.link_target;
    out.push_back(std::move(x));
  }
  return out;
}

}  // namespace nubo::transfer
