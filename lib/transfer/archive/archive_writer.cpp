#include "transfer/archive/archive_writer.hpp"

#include "nubo/error.hpp"

namespace nubo::transfer {

using namespace format;

namespace {
// Records smaller than this are gathered before a write: many small files would otherwise cost
// a system call per record.
constexpr std::size_t kBufferSize = 1 << 20;
}  // namespace

std::vector<std::byte> ArchiveWriter::header(std::uint32_t chunk_size,
                                             const std::optional<Encryption>& encryption) {
  Header h;
  h.chunk_size = chunk_size;
  if (encryption) {
    h.version_minor = encryption->kms ? kKmsMinor : kEncryptedMinor;
    h.key = encryption->block;
    h.kms = encryption->kms;
  }
  return encode_header(h);
}

void FdOutput::write(Bytes a, Bytes b) {
  if (b.empty()) {
    fd_.write_all(a);
  } else {
    fd_.writev_all(a, b);
  }
}

ArchiveWriter ArchiveWriter::create(std::unique_ptr<ArchiveOutput> out, std::uint32_t chunk_size,
                                    std::optional<Encryption> encryption) {
  auto head = header(chunk_size, encryption);
  out->write(head, {});
  ArchiveWriter w(std::move(out), chunk_size);
  w.offset_ = head.size();
  if (encryption) w.cipher_.emplace(std::move(encryption->cipher));
  return w;
}

ArchiveWriter ArchiveWriter::create(Fd fd, std::uint32_t chunk_size,
                                    std::optional<Encryption> encryption) {
  fd.truncate(0);
  fd.seek(0);
  return create(std::make_unique<FdOutput>(std::move(fd)), chunk_size, std::move(encryption));
}

ArchiveWriter ArchiveWriter::resume(std::unique_ptr<ArchiveOutput> out, std::uint32_t chunk_size,
                                    std::uint64_t offset, Index index,
                                    std::optional<ArchiveCipher> cipher) {
  ArchiveWriter w(std::move(out), chunk_size);
  w.offset_ = offset;
  w.index_ = std::move(index);
  w.cipher_ = std::move(cipher);
  return w;
}

ArchiveWriter ArchiveWriter::resume(Fd fd, std::uint32_t chunk_size, std::uint64_t offset,
                                    Index index, std::optional<ArchiveCipher> cipher) {
  fd.truncate(offset);
  fd.seek(offset);
  return resume(std::make_unique<FdOutput>(std::move(fd)), chunk_size, offset, std::move(index),
                std::move(cipher));
}

void ArchiveWriter::put(const RecordHeader& record, Bytes payload, const std::uint32_t* check) {
  auto r = record;
  if (cipher_) {
    if (!payload.empty()) {
      cipher_->seal(r, offset_, payload, sealed_);
      payload = sealed_;
    }
    r.hash = cipher_->mask(r.hash, offset_);
    check = nullptr;  // the check is of the sealed bytes
  }
  r.stored_size = static_cast<std::uint32_t>(payload.size());
  r.payload_check = check ? *check : payload_check(payload);
  auto head = encode_record_header(r);
  if (buffer_.size() + head.size() + payload.size() <= kBufferSize) {
    append(buffer_, head);
    append(buffer_, payload);
  } else {
    append(buffer_, head);
    out_->write(buffer_, payload);  // large payloads go straight from the job's buffer
    buffer_.clear();
  }
  offset_ += head.size() + payload.size();
}

std::uint32_t ArchiveWriter::add_entry(const EntryMeta& meta) {
  if (index_.entries.size() >= UINT32_MAX) {
    throw Error(Errc::invalid_argument, "an archive holds at most 4294967295 entries");
  }
  auto number = static_cast<std::uint32_t>(index_.entries.size());
  IndexEntry e;
  e.meta = meta;
  e.record_offset = offset_;
  e.first_chunk = index_.chunks.size();
  index_.entries.push_back(e);
  auto payload = encode_entry(meta);
  RecordHeader r;
  r.type = RecordType::entry;
  r.entry = number;
  r.raw_size = static_cast<std::uint32_t>(payload.size());
  r.hash = hash64(payload);
  put(r, payload);
  return number;
}

void ArchiveWriter::add_chunk(std::uint32_t entry, std::uint64_t file_offset, ChunkCodec codec,
                              int level, std::uint32_t raw_size, std::uint64_t raw_hash,
                              Bytes payload) {
  RecordHeader r;
  r.type = RecordType::chunk;
  r.codec = codec;
  r.level = static_cast<std::int8_t>(level);
  r.entry = entry;
  r.raw_size = raw_size;
  r.offset = file_offset;
  r.stored_size = stored_size(payload.size());
  r.hash = raw_hash;
  index_.chunks.push_back(index_chunk(r, offset_));
  index_.entries[entry].chunk_count++;
  // A raw chunk's payload is its raw bytes: the check is the low half of the hash already made,
  // which saves hashing every incompressible byte twice.
  auto check = static_cast<std::uint32_t>(raw_hash);
  put(r, payload, codec == ChunkCodec::none ? &check : nullptr);
}

void ArchiveWriter::end_file(std::uint32_t entry, const Hash128& hash) {
  auto& e = index_.entries[entry];
  e.hash = hash;
  EndPayload end{hash, e.chunk_count, e.meta.size};
  auto payload = encode_end(end);
  RecordHeader r;
  r.type = RecordType::end;
  r.entry = entry;
  r.raw_size = static_cast<std::uint32_t>(payload.size());
  r.hash = hash64(payload);
  put(r, payload);
}

void ArchiveWriter::add_bundle(const std::vector<EntryMeta>& members,
                               const std::vector<Hash128>& hashes, ChunkCodec codec, int level,
                               std::uint32_t raw_size, std::uint32_t table_offset,
                               std::uint64_t raw_hash, Bytes payload) {
  if (index_.entries.size() + members.size() > UINT32_MAX) {
    throw Error(Errc::invalid_argument, "an archive holds at most 4294967295 entries");
  }
  RecordHeader r;
  r.type = RecordType::bundle;
  r.codec = codec;
  r.level = static_cast<std::int8_t>(level);
  r.entry = static_cast<std::uint32_t>(index_.entries.size());  // its first member
  r.raw_size = raw_size;
  r.offset = table_offset;
  r.stored_size = stored_size(payload.size());
  r.hash = raw_hash;
  IndexChunk c = index_chunk(r, offset_);
  c.owner = r.entry;
  std::uint32_t at = 0;
  for (std::size_t i = 0; i < members.size(); ++i) {
    IndexEntry e;
    e.meta = members[i];
    e.record_offset = offset_;
    e.first_chunk = index_.chunks.size();
    e.bundled = true;
    if (e.meta.kind == EntryKind::file) {
      e.hash = hashes[i];
      e.bundle_offset = at;
      at += static_cast<std::uint32_t>(e.meta.size);
    }
    index_.entries.push_back(std::move(e));
  }
  index_.chunks.push_back(c);
  auto check = static_cast<std::uint32_t>(raw_hash);
  put(r, payload, codec == ChunkCodec::none ? &check : nullptr);
}

void ArchiveWriter::flush() {
  if (buffer_.empty()) return;
  out_->write(buffer_, {});
  buffer_.clear();
}

std::uint64_t ArchiveWriter::finish() {
  auto index = encode_index(index_);
  if (index.size() > kMaxIndexSize) {
    throw Error(Errc::invalid_argument,
                "the index would exceed 1 GiB: too many files or chunks for one archive; "
                "use a larger chunk size or several archives");
  }
  Trailer t;
  t.index_offset = offset_;
  RecordHeader r;
  r.type = RecordType::index;
  r.raw_size = static_cast<std::uint32_t>(index.size());
  r.hash = hash64(index);
  // Paths and sizes compress well: as stored raw, the index of many small files would be a
  // tenth of what zstd makes of their contents.
  std::vector<std::byte> compressed;
  Compressor compressor;
  auto n = compressor.compress(CodecSetting{ChunkCodec::zstd, 3}, index, compressed);
  r.codec = n > 0 ? ChunkCodec::zstd : ChunkCodec::none;
  Bytes payload = n > 0 ? Bytes{compressed.data(), n} : Bytes{index};
  put(r, payload);
  t.index_size = offset_ - t.index_offset;
  auto tail = encode_trailer(t);
  append(buffer_, tail);
  offset_ += tail.size();
  flush();
  return offset_;
}

}  // namespace nubo::transfer
