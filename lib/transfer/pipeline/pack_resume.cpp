#include "transfer/pipeline/pack_resume.hpp"

#include <optional>

#include "common/log.hpp"
#include "nubo/error.hpp"
#include "transfer/codec/codec.hpp"

namespace nubo::transfer {

using namespace format;

std::vector<std::byte> encode_checkpoint(const PackCheckpoint& c) {
  std::vector<std::byte> out;
  ByteWriter w(out);
  w.put<std::uint64_t>(c.archive_offset);
  w.put<std::uint64_t>(c.entries);
  w.put<std::uint64_t>(c.open_chunks);
  w.put<std::uint8_t>(c.open ? 1 : 0);
  w.put<std::uint32_t>(static_cast<std::uint32_t>(c.hash_state.size()));
  w.put_bytes(c.hash_state);
  return out;
}

std::optional<PackCheckpoint> decode_checkpoint(Bytes in) {
  try {
    ByteReader r(in, "checkpoint");
    PackCheckpoint c;
    c.archive_offset = r.get<std::uint64_t>();
    c.entries = r.get<std::uint64_t>();
    c.open_chunks = r.get<std::uint64_t>();
    c.open = r.get<std::uint8_t>() != 0;
    auto n = r.get<std::uint32_t>();
    auto state = r.take(n);
    c.hash_state.assign(state.begin(), state.end());
    return c;
  } catch (const Error&) {
    return std::nullopt;
  }
}

std::string entry_difference(const EntryMeta& packed, const EntryMeta& now) {
  if (packed.path != now.path) return "the sources are not the same as before";
  if (packed.kind != now.kind) return "it is now a " + std::string(entry_kind_name(now.kind));
  if (packed.size != now.size) return "its size changed";
  if (packed.mtime_ns != now.mtime_ns) return "its modification time changed";
  if (packed.mode != now.mode) return "its mode changed";
  if (packed.link_target != now.link_target) return "its link target changed";
  return {};
}

namespace {

class Scanner {
 public:
  Scanner(const Fd& part, const std::vector<SourceEntry>& sources, const Header& header,
          std::optional<ArchiveCipher> cipher)
      : part_(part),
        sources_(sources),
        header_(header),
        chunk_size_(header.chunk_size),
        size_(part.size()),
        cipher_(std::move(cipher)) {}

  PackResume run(const std::optional<PackCheckpoint>& checkpoint) {
    trusted_end_ = checkpoint ? checkpoint->archive_offset : header_.size();
    checkpoint_ = checkpoint;
    std::uint64_t at = header_.size();
    bool applied = false;
    // Each step consumes one whole record (>= 48 bytes) or stops: bounded by the file's size.
    for (;;) {
      if (checkpoint_ && !applied && at == trusted_end_) {
        applied = true;
        if (!apply_checkpoint()) break;
      }
      if (at >= size_ || !step(at)) break;
    }
    return finish(at);
  }

 private:
  // Takes the record at `at`; false to stop there.
  bool step(std::uint64_t& at) {
    bool verify = at >= trusted_end_;
    std::array<std::byte, kRecordHeaderSize> rh{};
    if (part_.pread(rh, at) != rh.size()) return false;
    RecordHeader r;
    try {
      r = decode_record_header(rh, chunk_size_, header_.seal_overhead());
    } catch (const Error&) {
      return false;
    }
    if (cipher_) r.hash = cipher_->mask(r.hash, at);
    auto end = at + kRecordHeaderSize + r.stored_size;
    if (end > size_) return false;
    switch (r.type) {
      case RecordType::entry: {
        if (open_ || r.entry != index_.entries.size()) return false;
        if (index_.entries.size() >= sources_.size()) return false;
        std::vector<std::byte> payload;
        if (!read_payload(at, r, payload) || hash64(payload) != r.hash) return false;
        EntryMeta meta;
        try {
          meta = decode_entry(payload);
        } catch (const Error&) {
          return false;
        }
        const auto& now = sources_[index_.entries.size()].meta;
        auto why = entry_difference(meta, now);
        if (!why.empty()) {
          log::warn("packing '" + now.path + "' again from its start: " + why +
                    " since the interrupted attempt");
          return false;
        }
        IndexEntry e;
        e.meta = meta;
        e.record_offset = at;
        e.first_chunk = index_.chunks.size();
        index_.entries.push_back(e);
        open_ = meta.kind == EntryKind::file;
        hasher_valid_ = verify;
        hasher_.reset();
        if (!open_) done_bytes_ = 0;
        break;
      }
      case RecordType::chunk: {
        if (!open_ || r.entry + 1 != index_.entries.size()) return false;
        auto& e = index_.entries.back();
        if (r.offset != e.chunk_count * chunk_size_ ||
            r.raw_size != std::min<std::uint64_t>(chunk_size_, e.meta.size - r.offset)) {
          return false;
        }
        if (verify) {
          std::vector<std::byte> raw;
          if (!read_verified(at, r, raw)) return false;
          if (hasher_valid_) hasher_.update(raw);
        }
        index_.chunks.push_back(index_chunk(r, at));
        e.chunk_count++;
        done_bytes_ += r.raw_size;
        break;
      }
      case RecordType::end: {
        if (!open_ || r.entry + 1 != index_.entries.size()) return false;
        auto& e = index_.entries.back();
        if (e.chunk_count != chunks_for(e.meta.size, chunk_size_)) return false;
        std::vector<std::byte> payload;
        if (!read_payload(at, r, payload) || hash64(payload) != r.hash) return false;
        auto end_payload = decode_end(payload);
        // Past the checkpoint the content hash is checked too; before it, the record is trusted.
        if (verify && (!hasher_valid_ || hasher_.digest() != end_payload.hash)) return false;
        e.hash = end_payload.hash;
        open_ = false;
        complete_bytes_ += e.meta.size;
        done_bytes_ = 0;
        break;
      }
      case RecordType::bundle:
        if (open_ || r.entry != index_.entries.size() || !take_bundle(at, r)) return false;
        break;
      case RecordType::index:
        return false;  // a finished archive is never resumed into
    }
    at = end;
    return true;
  }

  // The payload of the record at `at` as it was before it was sealed (an encrypted archive's
  // opened), its payload check matched; false for a damaged, torn or forged one.
  bool read_payload(std::uint64_t at, const RecordHeader& r, std::vector<std::byte>& out) {
    std::vector<std::byte> stored(r.stored_size);
    part_.pread_exact(stored, at + kRecordHeaderSize, "record");
    if (payload_check(stored) != r.payload_check) return false;
    if (!cipher_ || stored.empty()) {
      out = std::move(stored);
      return true;
    }
    return cipher_->open(r, at, stored, out);
  }

  // The raw bytes of the chunk or bundle record at `at`, its payload check and its XXH3-64
  // matched; false for a damaged or torn one.
  bool read_verified(std::uint64_t at, const RecordHeader& r, std::vector<std::byte>& raw) {
    std::vector<std::byte> stored;
    if (!read_payload(at, r, stored)) return false;
    raw.resize(r.raw_size);
    try {
      decompressor_.decompress(r.codec, stored, raw);
    } catch (const Error&) {
      return false;
    }
    return hash64(raw) == r.hash;
  }

  // A bundle is always decoded: its entry records are inside. Each member must still be the
  // source it was.
  bool take_bundle(std::uint64_t at, const RecordHeader& r) {
    std::vector<std::byte> raw;
    if (!read_verified(at, r, raw)) return false;
    std::vector<EntryMeta> members;
    try {
      members = decode_bundle_table(raw, r.offset);
    } catch (const Error&) {
      return false;
    }
    const auto first = index_.entries.size();
    if (members.size() > sources_.size() - first) return false;
    std::uint64_t content = 0;
    for (std::size_t i = 0; i < members.size(); ++i) {
      const auto& now = sources_[first + i].meta;
      auto why = entry_difference(members[i], now);
      if (!why.empty()) {
        log::warn("packing '" + now.path + "' again: " + why + " since the interrupted attempt");
        return false;
      }
      content += members[i].size;
    }
    if (content != r.offset) return false;
    IndexChunk c = index_chunk(r, at);
    c.owner = static_cast<std::uint32_t>(first);
    std::uint32_t offset = 0;
    for (auto& meta : members) {
      IndexEntry e;
      e.record_offset = at;
      e.first_chunk = index_.chunks.size();
      e.bundled = true;
      if (meta.kind == EntryKind::file) {
        e.bundle_offset = offset;
        e.hash = hash128({raw.data() + offset, static_cast<std::size_t>(meta.size)});
        offset += static_cast<std::uint32_t>(meta.size);
      }
      complete_bytes_ += meta.size;
      e.meta = std::move(meta);
      index_.entries.push_back(std::move(e));
    }
    index_.chunks.push_back(c);
    done_bytes_ = 0;
    return true;
  }

  // At the checkpoint: the records before it must be what the checkpoint says, and the open
  // file's hash state is restored from it.
  bool apply_checkpoint() {
    const auto& c = *checkpoint_;
    if (c.entries != index_.entries.size() || c.open != open_) return false;
    if (open_) {
      if (c.open_chunks != index_.entries.back().chunk_count) return false;
      hasher_valid_ = hasher_.restore(c.hash_state);
    }
    return true;
  }

  PackResume finish(std::uint64_t at) {
    PackResume out;
    // An open file whose hash cannot be continued is packed again from its start.
    if (open_ && !hasher_valid_) {
      at = index_.entries.back().record_offset;
      index_.chunks.resize(index_.entries.back().first_chunk);
      index_.entries.pop_back();
      open_ = false;
      done_bytes_ = 0;
    }
    out.fresh = false;
    out.offset = at;
    out.next_entry = index_.entries.size() - (open_ ? 1 : 0);
    out.open = open_;
    out.next_chunk = open_ ? index_.entries.back().chunk_count : 0;
    out.hasher = std::move(hasher_);
    out.skipped_bytes = complete_bytes_ + (open_ ? done_bytes_ : 0);
    out.index = std::move(index_);
    out.cipher = std::move(cipher_);
    return out;
  }

  const Fd& part_;
  const std::vector<SourceEntry>& sources_;
  Header header_;
  std::uint32_t chunk_size_;
  std::uint64_t size_;
  std::optional<ArchiveCipher> cipher_;
  std::uint64_t trusted_end_ = 0;
  std::optional<PackCheckpoint> checkpoint_;
  Index index_;
  bool open_ = false;
  bool hasher_valid_ = false;
  FileHasher hasher_;
  Decompressor decompressor_;
  std::uint64_t complete_bytes_ = 0, done_bytes_ = 0;
};

}  // namespace

PackResume scan_partial(const Fd& part, const Journal& journal,
                        const std::vector<SourceEntry>& sources, std::uint32_t chunk_size,
                        const KeySource& keys) {
  PackResume fresh;
  std::vector<std::byte> head(kMaxHeaderSize);
  head.resize(part.pread(head, 0));
  Header header;
  std::optional<ArchiveCipher> cipher;
  try {
    header = decode_header(head);
    if (header.chunk_size != chunk_size) {
      log::warn(part.name() + " was made with another chunk size: starting over");
      return fresh;
    }
    if (header.key.has_value() != keys.encrypts()) {
      log::warn(part.name() + (keys.encrypts() ? " was not encrypted" : " was encrypted") +
                ": starting over");
      return fresh;
    }
    if (keys.encrypts()) cipher.emplace(keys.open(*header.key, header.kms, part.name()));
  } catch (const Error& e) {
    if (e.code() == Errc::unavailable) throw;  // KMS out of reach: the partial archive is kept
    if (keys.encrypts() && header.key) log::warn(std::string(e.what()) + ": starting over");
    return fresh;
  }
  // The last checkpoint that lies within the file; an earlier one is as good, only slower.
  std::optional<PackCheckpoint> checkpoint;
  auto size = part.size();
  for (const auto& rec : journal.loaded()) {
    if (rec.type != kPackCheckpoint) continue;
    auto c = decode_checkpoint(rec.payload);
    if (c && c->archive_offset >= header.size() && c->archive_offset <= size) checkpoint = c;
  }
  Scanner scanner(part, sources, header, std::move(cipher));
  return scanner.run(checkpoint);
}

}  // namespace nubo::transfer
