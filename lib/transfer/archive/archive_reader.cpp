#include "transfer/archive/archive_reader.hpp"

#include <set>
#include <string_view>

#include "nubo/error.hpp"
#include "transfer/hash.hpp"
#include "transfer/paths.hpp"
#include "transfer/store/object_source.hpp"

namespace nubo::transfer {

using namespace format;

namespace {

[[noreturn]] void corrupt_at(const std::string& where, const std::string& problem) {
  throw Error(Errc::corrupt, where + ": " + problem);
}

// A compressed index as it is decoded, and the XXH3-64 of what it decoded to.
class HashedZstdStream : public ByteStream {
 public:
  HashedZstdStream(Bytes frame, std::uint64_t size) : frame_(frame, size) {}
  std::size_t read_some(std::vector<std::byte>& out, std::size_t max) override {
    const auto at = out.size();
    const auto n = frame_.read_some(out, max);
    hash_.update({out.data() + at, n});
    return n;
  }
  // Checks that the frame ended where it declared, and returns the hash.
  std::uint64_t finish() {
    frame_.finish();
    return hash_.digest();
  }

 private:
  ZstdFrameStream frame_;
  Hasher64 hash_;
};

// Rethrows a decoder's corrupt error with `where` in front of its message.
template <class F>
auto with_context(const std::string& where, F&& f) {
  try {
    return f();
  } catch (const Error& e) {
    throw Error(e.code(), where + ": " + e.what());
  }
}

}  // namespace

ArchiveFile ArchiveFile::open(const std::string& path, const KeySource& keys) {
  return open(std::shared_ptr<ByteSource>(open_source(path)), keys);
}

ArchiveFile ArchiveFile::open(std::shared_ptr<ByteSource> source, const KeySource& keys) {
  ArchiveFile a;
  a.source_ = std::move(source);
  const std::string path = a.source_->name();
  a.size_ = a.source_->size();
  if (a.size_ < kHeaderSize) {
    corrupt_at(path, "only " + std::to_string(a.size_) + " bytes: too short to be a nubo archive");
  }
  std::vector<std::byte> head(std::min<std::uint64_t>(a.size_, kMaxHeaderSize));
  a.source_->pread_exact(head, 0, "archive header");
  a.header_ = with_context(path, [&] { return decode_header(head); });
  if (a.header_.key) a.cipher_.emplace(keys.open(*a.header_.key, a.header_.kms, path));
  const auto begin = a.data_begin();

  // The trailer and the index; when either is missing or damaged, say where the data ends.
  try {
    if (a.size_ < begin + kRecordHeaderSize + kTrailerSize) {
      throw Error(Errc::corrupt, "trailer: truncated (the archive has no index)");
    }
    std::array<std::byte, kTrailerSize> tail{};
    a.source_->pread_exact(tail, a.size_ - kTrailerSize, "trailer");
    a.trailer_ = decode_trailer(tail);
    const auto& t = a.trailer_;
    if (t.index_offset < begin || t.index_size < kRecordHeaderSize ||
        t.index_offset > a.size_ - kTrailerSize ||
        t.index_size != a.size_ - kTrailerSize - t.index_offset) {
      throw Error(Errc::corrupt, "trailer: the index position does not fit the file");
    }
    std::array<std::byte, kRecordHeaderSize> rh{};
    a.source_->pread_exact(rh, t.index_offset, "index record");
    auto r = a.record_header(rh, t.index_offset);
    if (r.type != RecordType::index || r.stored_size != t.index_size - kRecordHeaderSize) {
      throw Error(Errc::corrupt, "index: the trailer does not point at an index record");
    }
    if (r.raw_size > kMaxIndexSize) {
      throw Error(Errc::corrupt,
                  "index: " + std::to_string(r.raw_size) + " bytes is beyond the 1 GiB limit");
    }
    // The stored size was checked against the file's real size: this allocation is backed by
    // data. The decoded size is only declared: a compressed index is decoded as it is read,
    // and the first entry that does not fit stops it.
    std::vector<std::byte> payload(r.stored_size);
    a.source_->pread_exact(payload, t.index_offset + kRecordHeaderSize, "index");
    if (payload_check(payload) != r.payload_check) {
      throw Error(Errc::corrupt, "index: payload checksum mismatch");
    }
    std::vector<std::byte> opened;
    auto stored = a.open_payload(r, t.index_offset, payload, opened, "index");
    const auto decode = [&](ByteReader& reader) {
      a.index_ = decode_index(reader, a.header_.version_major, a.header_.chunk_size, begin,
                              t.index_offset, a.header_.seal_overhead());
    };
    if (r.codec == ChunkCodec::none) {
      if (hash64(stored) != r.hash) throw Error(Errc::corrupt, "index: checksum mismatch");
      ByteReader reader(stored, "index");
      decode(reader);
    } else {
      HashedZstdStream decoded(stored, r.raw_size);
      ByteReader reader(decoded, r.raw_size, "index");
      decode(reader);
      if (decoded.finish() != r.hash) throw Error(Errc::corrupt, "index: checksum mismatch");
    }
    a.id_ = r.hash;
  } catch (const Error& e) {
    if (e.code() != Errc::corrupt) throw;
    const Fd* file = a.source_->file();
    corrupt_at(path,
               std::string(e.what()) + (file ? "; " + describe_damage(*file, a.header_) : ""));
  }

  std::set<std::string_view> seen;
  for (const auto& e : a.index_.entries) {
    with_context(path, [&] { paths::check_entry(e.meta.path); });
    if (!seen.insert(e.meta.path).second) {
      corrupt_at(path, "entry '" + e.meta.path + "' appears twice; refused");
    }
  }
  return a;
}

RecordHeader ArchiveFile::record_header(Bytes bytes, std::uint64_t record_offset) const {
  auto r = decode_record_header(bytes, header_.chunk_size, header_.seal_overhead());
  if (cipher_) r.hash = cipher_->mask(r.hash, record_offset);
  return r;
}

Bytes ArchiveFile::open_payload(const RecordHeader& r, std::uint64_t record_offset, Bytes stored,
                                std::vector<std::byte>& out, const std::string& where) const {
  if (!cipher_ || stored.empty()) return stored;
  if (!cipher_->open(r, record_offset, stored, out))
    corrupt_at(where,
               "does not authenticate under the archive's key: the record was altered, "
               "moved, or copied from another archive");
  return out;
}

std::string ArchiveFile::chunk_context(std::size_t entry, std::uint64_t k) const {
  const auto& e = index_.entries[entry];
  const auto& c = chunk(entry, k);
  auto begin = k * header_.chunk_size;
  return source_->name() + ": file '" + e.meta.path + "' chunk " + std::to_string(k) + " of " +
         std::to_string(e.chunk_count) + " (bytes " + std::to_string(begin) + ".." +
         std::to_string(begin + c.raw_size) + ", record at archive offset " +
         std::to_string(c.record_offset) + ")";
}

void ArchiveFile::read_record(const IndexChunk& c, const std::string& where,
                              std::vector<std::byte>& record) const {
  // Sizes come from the checked index: stored_size <= raw_size <= chunk size.
  record.resize(kRecordHeaderSize + c.stored_size);
  if (c.record_offset + record.size() > data_end() ||
      source_->pread(record, c.record_offset) != record.size()) {
    corrupt_at(where, "the record extends past the data");
  }
}

void ArchiveFile::read_chunk(std::size_t entry, std::uint64_t k,
                             std::vector<std::byte>& record) const {
  read_record(chunk(entry, k), chunk_context(entry, k), record);
}

void ArchiveFile::read_bundle(std::size_t entry, std::vector<std::byte>& record) const {
  read_record(index_.chunks[index_.entries[entry].first_chunk], bundle_context(entry), record);
}

std::pair<std::size_t, std::size_t> ArchiveFile::bundle_members(std::size_t entry) const {
  const auto& c = index_.chunks[index_.entries[entry].first_chunk];
  auto end = std::size_t{c.owner};
  while (end < index_.entries.size() && index_.entries[end].bundled &&
         index_.entries[end].first_chunk == index_.entries[entry].first_chunk)
    ++end;
  return {c.owner, end};
}

std::string ArchiveFile::bundle_context(std::size_t entry) const {
  auto [first, end] = bundle_members(entry);
  const auto& c = index_.chunks[index_.entries[entry].first_chunk];
  return source_->name() + ": bundle of entries '" + index_.entries[first].meta.path + "'..'" +
         index_.entries[end - 1].meta.path + "' (record at archive offset " +
         std::to_string(c.record_offset) + ")";
}

Bytes ArchiveFile::decode_bundle(std::size_t entry, Bytes record, std::vector<std::byte>& raw,
                                 Decompressor& decompressor) const {
  const auto& c = index_.chunks[index_.entries[entry].first_chunk];
  auto [first, end] = bundle_members(entry);
  auto where = bundle_context(entry);
  auto r = with_context(where, [&] { return record_header(record, c.record_offset); });
  if (r.type != RecordType::bundle || r.entry != first || r.raw_size != c.raw_size ||
      r.stored_size != c.stored_size || r.codec != c.codec || r.hash != c.raw_hash) {
    corrupt_at(where, "the record does not match the index");
  }
  auto out = decode_payload(c, r, record, raw, decompressor, where);
  // The entry records it carries must be the index's, and the contents must tile the bytes
  // before them in member order.
  auto metas = with_context(where, [&] { return decode_bundle_table(out, r.offset); });
  if (metas.size() != end - first) corrupt_at(where, "its entry records do not match the index");
  std::uint64_t at = 0;
  for (std::size_t i = 0; i < metas.size(); ++i) {
    const auto& e = index_.entries[first + i];
    if (!(metas[i] == e.meta) || (e.meta.kind == EntryKind::file && e.bundle_offset != at))
      corrupt_at(where, "its entry record of '" + metas[i].path + "' does not match the index");
    at += e.meta.size;
  }
  if (at != r.offset) corrupt_at(where, "its contents do not end where its entry records start");
  return out;
}

Bytes ArchiveFile::decode_chunk(std::size_t entry, std::uint64_t k, Bytes record,
                                std::vector<std::byte>& raw, Decompressor& decompressor) const {
  const auto& c = chunk(entry, k);
  auto where = chunk_context(entry, k);
  auto r = with_context(where, [&] { return record_header(record, c.record_offset); });
  if (r.type != RecordType::chunk || r.entry != entry || r.offset != k * header_.chunk_size ||
      r.raw_size != c.raw_size || r.stored_size != c.stored_size || r.codec != c.codec ||
      r.hash != c.raw_hash) {
    corrupt_at(where, "the record does not match the index");
  }
  return decode_payload(c, r, record, raw, decompressor, where);
}

Bytes ArchiveFile::decode_payload(const IndexChunk& c, const RecordHeader& r, Bytes record,
                                  std::vector<std::byte>& raw, Decompressor& decompressor,
                                  const std::string& where) const {
  auto payload = record.subspan(kRecordHeaderSize);
  Bytes out;
  if (c.codec == ChunkCodec::none && !cipher_) {
    // The payload is the raw bytes: its payload check is the low half of their hash.
    if (payload.size() != c.raw_size || static_cast<std::uint32_t>(c.raw_hash) != r.payload_check) {
      corrupt_at(where, "raw payload does not match its record");
    }
    out = payload;
  } else {
    if (payload_check(payload) != r.payload_check) {
      corrupt_at(where, "payload checksum mismatch: the stored bytes are damaged");
    }
    if (c.codec == ChunkCodec::none) {  // sealed raw bytes: opened straight into `raw`
      out = open_payload(r, c.record_offset, payload, raw, where);
      if (out.size() != c.raw_size) corrupt_at(where, "raw payload does not match its record");
    } else {
      thread_local std::vector<std::byte> opened;
      auto stored = open_payload(r, c.record_offset, payload, opened, where);
      raw.resize(c.raw_size);
      with_context(where, [&] { decompressor.decompress(c.codec, stored, raw); });
      out = raw;
    }
  }
  if (hash64(out) != c.raw_hash) corrupt_at(where, "checksum mismatch: the data is corrupt");
  return out;
}

namespace {

// Reads the record of `type` for `entry` at `at` and returns its payload, checked.
std::vector<std::byte> read_meta_record(const ArchiveFile& a, std::size_t entry, std::uint64_t at,
                                        RecordType type, std::size_t max_payload,
                                        const std::string& where) {
  std::array<std::byte, kRecordHeaderSize> rh{};
  if (at + rh.size() > a.data_end()) corrupt_at(where, "missing at offset " + std::to_string(at));
  a.source().pread_exact(rh, at, where);
  auto r = with_context(where + " at offset " + std::to_string(at),
                        [&] { return a.record_header(rh, at); });
  if (r.type != type || r.entry != entry || r.raw_size > max_payload ||
      at + rh.size() + r.stored_size > a.data_end()) {
    corrupt_at(where, "the record at offset " + std::to_string(at) + " does not match the index");
  }
  std::vector<std::byte> stored(r.stored_size), opened;
  a.source().pread_exact(stored, at + rh.size(), where);
  auto payload = a.open_payload(r, at, stored, opened, where);
  if (hash64(payload) != r.hash) corrupt_at(where, "checksum mismatch");
  return {payload.begin(), payload.end()};
}

}  // namespace

std::uint64_t ArchiveFile::check_entry_record(std::size_t entry) const {
  const auto& e = index_.entries[entry];
  auto where = source_->name() + ": " + std::string(entry_kind_name(e.meta.kind)) + " '" +
               e.meta.path + "': entry record";
  auto payload =
      read_meta_record(*this, entry, e.record_offset, RecordType::entry, kMaxEntryPayload, where);
  auto meta = with_context(where, [&] { return decode_entry(payload); });
  if (!(meta == e.meta)) corrupt_at(where, "differs from the index");
  return e.record_offset + kRecordHeaderSize + payload.size() + header_.seal_overhead();
}

std::uint64_t ArchiveFile::end_record_offset(std::size_t entry) const {
  const auto& e = index_.entries[entry];
  if (e.chunk_count == 0) {
    return e.record_offset + kRecordHeaderSize + encode_entry(e.meta).size() +
           header_.seal_overhead();
  }
  const auto& last = chunk(entry, e.chunk_count - 1);
  return last.record_offset + kRecordHeaderSize + last.stored_size;
}

std::uint64_t ArchiveFile::check_end_record(std::size_t entry) const {
  const auto& e = index_.entries[entry];
  auto where = source_->name() + ": file '" + e.meta.path + "': end record";
  auto at = end_record_offset(entry);
  auto payload = read_meta_record(*this, entry, at, RecordType::end, kEndPayloadSize, where);
  auto end = with_context(where, [&] { return decode_end(payload); });
  if (end.hash != e.hash || end.chunks != e.chunk_count || end.size != e.meta.size) {
    corrupt_at(where, "differs from the index");
  }
  return at + kRecordHeaderSize + payload.size() + header_.seal_overhead();
}

void ReadAhead::reading(std::uint64_t position) {
  const auto& chunks = archive_.index().chunks;
  const auto bytes = [&](std::uint64_t p) { return kRecordHeaderSize + chunks[p].stored_size; };
  // Announced records up to this one are read now (or were passed over): no longer ahead.
  for (; consumed_ <= position && consumed_ < next_; ++consumed_) ahead_ -= bytes(consumed_);
  consumed_ = std::max(consumed_, position + 1);
  next_ = std::max(next_, position + 1);
  // Records that follow each other are announced together, up to a window: one request rather
  // than several. The small records between them (a large file's entry and end records, which
  // unpack and verify read too) are in the window, and so are those right after its last one:
  // every gap belongs to the window before it. A window is announced once a whole one fits in the
  // bytes ahead, so that they stay large as the reader consumes them record by record.
  const Prefetch plan = archive_.source().prefetch();
  for (;;) {
    const std::uint64_t window =
        windows_ >= 16 ? plan.window : std::min(plan.window, kFirstWindow << windows_);
    if (next_ >= chunks.size() || ahead_ + window > plan.ahead) break;
    ++windows_;
    const auto start = chunks[next_].record_offset;
    auto end = chunks[next_].record_offset + bytes(next_);
    ahead_ += bytes(next_);
    for (++next_; next_ < chunks.size(); ++next_) {
      const auto at = chunks[next_].record_offset;
      if (at < end || at - end > kGap || at + bytes(next_) - start > window) break;
      end = at + bytes(next_);
      ahead_ += bytes(next_);
    }
    const auto after = next_ < chunks.size() ? chunks[next_].record_offset : archive_.data_end();
    if (after >= end && after - end <= kGap) end = after;
    archive_.source().will_need(start, end - start);
  }
}

std::string describe_damage(const Fd& fd, const Header& header) {
  const auto chunk_size = header.chunk_size;
  std::uint64_t size = 0;
  try {
    size = fd.size();
  } catch (const Error&) {
    return "the archive cannot be read";
  }
  std::uint64_t at = header.size();
  std::string last_file;
  std::uint64_t last_bundle = 0;
  std::uint64_t file_chunks = 0, chunks_seen = 0, file_size = 0;
  bool in_file = false;
  std::array<std::byte, kRecordHeaderSize> rh{};
  // Bounded by the file: each step advances by at least one record header.
  while (at + kRecordHeaderSize <= size) {
    if (fd.pread(rh, at) != rh.size()) break;
    RecordHeader r;
    try {
      r = decode_record_header(rh, chunk_size, header.seal_overhead());
    } catch (const Error&) {
      break;
    }
    if (at + kRecordHeaderSize + r.stored_size > size) break;
    if (r.type == RecordType::entry && !header.key) {
      std::vector<std::byte> payload(r.stored_size);
      if (fd.pread(payload, at + kRecordHeaderSize) != payload.size()) break;
      try {
        auto e = decode_entry(payload);
        last_file = e.path;
        last_bundle = 0;
        in_file = e.kind == EntryKind::file;
        file_size = e.size;
        file_chunks = chunks_for(e.size, chunk_size);
        chunks_seen = 0;
      } catch (const Error&) {
        break;
      }
    } else if (r.type == RecordType::chunk) {
      ++chunks_seen;
    } else if (r.type == RecordType::end) {
      in_file = false;
    } else if (r.type == RecordType::bundle) {
      in_file = false;
      last_bundle = r.entry + 1;  // 0: none
    } else if (r.type == RecordType::index) {
      return "the data records are whole up to the index at offset " + std::to_string(at);
    }
    at += kRecordHeaderSize + r.stored_size;
  }
  std::string where = "the records are whole up to offset " + std::to_string(at);
  if (in_file) {
    where += ", inside file '" + last_file + "' (" + std::to_string(file_size) +
             " bytes) at chunk " + std::to_string(chunks_seen) + " of " +
             std::to_string(file_chunks);
  } else if (last_bundle > 0) {
    where += ", after the bundle of entries from number " + std::to_string(last_bundle - 1);
  } else if (!last_file.empty()) {
    where += ", after entry '" + last_file + "'";
  }
  return where;
}

}  // namespace nubo::transfer
