// The public read side: list(), Reader (random access to any byte range of any file), and the
// name of an entry's kind.
#include <algorithm>
#include <mutex>
#include <unordered_map>

#include "nubo/error.hpp"
#include "nubo/transfer.hpp"
#include "transfer/archive/archive_reader.hpp"
#include "transfer/archive/entries.hpp"

namespace nubo::transfer {

std::string_view entry_kind_name(EntryKind k) noexcept {
  return format::entry_kind_name(static_cast<format::EntryKind>(k));
}

namespace {

std::vector<Entry> to_entries(const ArchiveFile& a) {
  std::vector<Entry> out;
  out.reserve(a.index().entries.size());
  for (std::size_t i = 0; i < a.index().entries.size(); ++i) {
    const auto& e = a.index().entries[i];
    Entry x = entry_of(e.meta);
    if (e.meta.kind == format::EntryKind::file) x.hash = e.hash.hex();
    x.chunks = e.chunk_count;
    for (std::uint64_t k = 0; k < e.chunk_count; ++k) x.stored_size += a.chunk(i, k).stored_size;
    if (e.bundled) {
      const auto& c = a.index().chunks[e.first_chunk];
      x.stored_size = c.stored_size * e.meta.size / c.raw_size;
    }
    out.push_back(std::move(x));
  }
  return out;
}

}  // namespace

std::vector<Entry> list(const std::string& archive, const std::string& key_file) {
  return to_entries(ArchiveFile::open(archive, KeySource::parse(key_file)));
}

struct Reader::Impl {
  ArchiveFile archive;
  std::vector<Entry> entries;
  std::unordered_map<std::string_view, std::size_t> by_path;
  // The last chunk or bundle decoded (by its place in the chunk table): reads in small pieces,
  // in order, decode each once.
  mutable std::mutex mutex;
  mutable Decompressor decompressor;
  mutable std::vector<std::byte> record, chunk;
  mutable std::uint64_t cached = UINT64_MAX;
};

Reader::Reader(const std::string& archive, const std::string& key_file)
    : impl_(std::make_unique<Impl>()) {
  impl_->archive = ArchiveFile::open(archive, KeySource::parse(key_file));
  impl_->entries = to_entries(impl_->archive);
  for (std::size_t i = 0; i < impl_->entries.size(); ++i) {
    impl_->by_path.emplace(impl_->entries[i].path, i);
  }
}

Reader::~Reader() = default;
Reader::Reader(Reader&&) noexcept = default;
Reader& Reader::operator=(Reader&&) noexcept = default;

const std::vector<Entry>& Reader::entries() const {
  return impl_->entries;
}

std::uint64_t Reader::bytes_fetched() const {
  return impl_->archive.source().bytes_fetched();
}

std::uint32_t Reader::chunk_size() const {
  return impl_->archive.chunk_size();
}

const Entry* Reader::find(std::string_view path) const {
  auto it = impl_->by_path.find(path);
  return it == impl_->by_path.end() ? nullptr : &impl_->entries[it->second];
}

std::size_t Reader::read(std::string_view path, std::uint64_t offset,
                         std::span<std::byte> out) const {
  auto it = impl_->by_path.find(path);
  const auto& a = impl_->archive;
  if (it == impl_->by_path.end()) {
    throw Error(Errc::not_found, a.path() + ": no entry '" + std::string(path) + "'");
  }
  auto entry = it->second;
  const auto& e = impl_->entries[entry];
  if (e.kind != EntryKind::file) {
    throw Error(Errc::invalid_argument, a.path() + ": '" + e.path + "' is a " +
                                            std::string(entry_kind_name(e.kind)) + ", not a file");
  }
  if (offset >= e.size || out.empty()) return 0;
  auto want = static_cast<std::size_t>(std::min<std::uint64_t>(out.size(), e.size - offset));
  std::lock_guard lock(impl_->mutex);
  std::size_t done = 0;
  const auto& ie = a.index().entries[entry];
  while (done < want) {
    auto at = offset + done;
    // A bundled file lies at its offset in its bundle; a chunked one's bytes are chunk-aligned.
    auto k = ie.bundled ? 0 : at / a.chunk_size();
    if (impl_->cached != ie.first_chunk + k) {
      impl_->cached = UINT64_MAX;
      Bytes data;
      if (ie.bundled) {
        a.read_bundle(entry, impl_->record);
        data = a.decode_bundle(entry, impl_->record, impl_->chunk, impl_->decompressor);
      } else {
        a.read_chunk(entry, k, impl_->record);
        data = a.decode_chunk(entry, k, impl_->record, impl_->chunk, impl_->decompressor);
      }
      if (data.data() != impl_->chunk.data()) impl_->chunk.assign(data.begin(), data.end());
      impl_->cached = ie.first_chunk + k;
    }
    const std::uint64_t in_chunk =
        ie.bundled ? std::uint64_t{ie.bundle_offset} + at : at - k * a.chunk_size();
    // Every pass copies at least one byte, or fails: the index was checked so that the bytes
    // lie in their chunk, and a reader never spins on one that says otherwise.
    if (in_chunk >= impl_->chunk.size()) {
      throw Error(Errc::corrupt, a.path() + ": '" + e.path + "': byte " + std::to_string(at) +
                                     " lies past the end of its chunk");
    }
    auto n = static_cast<std::size_t>(
        std::min<std::uint64_t>(want - done, impl_->chunk.size() - in_chunk));
    std::copy_n(impl_->chunk.data() + in_chunk, n, out.data() + done);
    done += n;
  }
  return done;
}

std::vector<std::byte> Reader::read(std::string_view path, std::uint64_t offset,
                                    std::size_t size) const {
  const auto* e = find(path);
  std::uint64_t available =
      e && e->kind == EntryKind::file && offset < e->size ? e->size - offset : 0;
  // Never more than the file holds, whatever size was asked for.
  std::vector<std::byte> out(static_cast<std::size_t>(std::min<std::uint64_t>(size, available)));
  out.resize(read(path, offset, out));
  return out;
}

}  // namespace nubo::transfer
