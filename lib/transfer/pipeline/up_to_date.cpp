// archive_difference (nubo/transfer.hpp): whether an archive is what packing its sources would
// make now. The entries are compared as a resumed pack compares what it packed before
// (entry_difference), and in the walk's order, which is the archive's.
#include <chrono>
#include <optional>

#include "nubo/error.hpp"
#include "nubo/transfer.hpp"
#include "transfer/archive/archive_reader.hpp"
#include "transfer/keys/archive_cipher.hpp"
#include "transfer/pipeline/pack_resume.hpp"
#include "transfer/pipeline/pack_target.hpp"
#include "transfer/pipeline/summary.hpp"
#include "transfer/pipeline/walk.hpp"
#include "transfer/store/store.hpp"

namespace nubo::transfer {

namespace {

// The first difference between the archive and what packing the sources makes now; "" for none.
std::string difference(const ArchiveFile& a, const std::vector<std::string>& sources,
                       const PackOptions& options, bool encrypting) {
  if (encrypting && !a.header().key) return "it is not encrypted";
  if (a.chunk_size() != options.chunk_size)
    return "its chunks are of " + std::to_string(a.chunk_size()) + " bytes, not " +
           std::to_string(options.chunk_size);
  const auto& archive = a.path();
  const bool local = !store::is_url(archive) && archive != "-";
  const auto walk =
      walk_sources(sources, local ? companions_of(archive) : std::vector<std::string>{},
                   PathFilter(options.exclude, options.include));
  const auto& packed = a.index().entries;
  const auto& now = walk.entries;
  for (std::size_t i = 0; i < std::min(packed.size(), now.size()); ++i) {
    if (packed[i].meta.path != now[i].meta.path) {
      return packed[i].meta.path < now[i].meta.path
                 ? "'" + packed[i].meta.path + "' is no longer in the sources"
                 : "'" + now[i].meta.path + "' is new";
    }
    if (auto why = entry_difference(packed[i].meta, now[i].meta); !why.empty())
      return "'" + now[i].meta.path + "': " + why;
  }
  if (packed.size() > now.size())
    return "'" + packed[now.size()].meta.path + "' is no longer in the sources";
  if (now.size() > packed.size()) return "'" + now[packed.size()].meta.path + "' is new";
  return {};
}

}  // namespace

std::string archive_difference(const std::string& archive, const std::vector<std::string>& sources,
                               const PackOptions& options) {
  // A malformed store URL is the caller's error, not an archive that differs.
  if (store::is_url(archive)) store::parse_url(archive);
  const auto keys = KeySource::parse(options.key_file);
  std::optional<ArchiveFile> a;
  try {
    a.emplace(ArchiveFile::open(archive, keys));
  } catch (const Error& e) {
    // Encrypted under another key, or with no key given: another archive than this pack's.
    if (e.code() != Errc::invalid_argument) throw;
    return e.what();
  }
  return difference(*a, sources, options, keys.encrypts());
}

std::optional<Summary> unchanged(const std::string& archive,
                                 const std::vector<std::string>& sources,
                                 const PackOptions& options) {
  const auto started = std::chrono::steady_clock::now();
  const auto keys = KeySource::parse(options.key_file);
  std::optional<ArchiveFile> a;
  try {
    a.emplace(ArchiveFile::open(archive, keys));
    if (!difference(*a, sources, options, keys.encrypts()).empty()) return std::nullopt;
  } catch (const Error&) {
    return std::nullopt;  // none there, or no whole archive: the pack makes it
  }
  Summary s;
  for (const auto& e : a->index().entries) {
    count_entry(s, e.meta.kind);
    s.bytes += e.meta.size;
  }
  for (const auto& c : a->index().chunks) count_stored(s.chunks_by_codec, c.codec);
  s.chunks = a->index().chunks.size();
  s.bytes_stored = a->size();
  s.bytes_skipped = s.bytes;  // and nothing uploaded: a pack's bytes_transferred is what it sent
  s.up_to_date = true;
  s.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return s;
}

}  // namespace nubo::transfer
