#include "transfer/format/format.hpp"

#include <cstring>

#include "nubo/error.hpp"
#include "transfer/store/s3/aws_names.hpp"

namespace nubo::transfer::format {
namespace {

// PNG-style: a non-ASCII first byte and CR LF SUB catch transfers that mangle binary files.
constexpr std::array<unsigned char, 8> kMagic = {0x89, 'N', 'U', 'B', 'O', '\r', '\n', 0x1a};
constexpr std::array<unsigned char, 4> kRecordMagic = {'N', 'R', 'E', 'C'};
constexpr std::array<unsigned char, 8> kTrailerMagic = {'N', 'U', 'B', 'O', '-', 'E', 'N', 'D'};

[[noreturn]] void corrupt(const std::string& message) {
  throw Error(Errc::corrupt, message);
}

template <std::size_t N>
bool has_magic(Bytes in, const std::array<unsigned char, N>& magic) {
  return in.size() >= N && std::memcmp(in.data(), magic.data(), N) == 0;
}

template <std::size_t N>
void put_magic(std::byte* out, const std::array<unsigned char, N>& magic) {
  std::memcpy(out, magic.data(), N);
}

// The checksum of a fixed-size structure: XXH3-64 of everything before its last 8 bytes.
constexpr std::uint32_t kFlagEncrypted = 1;
constexpr std::uint32_t kFlagKms = 2;

// The most a chunk or bundle's payload may take: encrypted, sealing adds to all but zero chunks
// (which have no payload).
std::uint64_t max_stored(ChunkCodec codec, std::uint32_t raw_size, std::uint32_t seal_overhead) {
  return max_stored_size(codec, raw_size) + (codec == ChunkCodec::zero ? 0 : seal_overhead);
}

template <std::size_t N>
void seal(std::array<std::byte, N>& out) {
  put_le<std::uint64_t>(out.data() + N - 8, hash64({out.data(), N - 8}));
}
bool sealed(Bytes in) {
  return get_le<std::uint64_t>(in.data() + in.size() - 8) == hash64(in.first(in.size() - 8));
}

}  // namespace

std::array<std::byte, kKeyBlockSize> encode_key_block(const KeyBlock& k) {
  std::array<std::byte, kKeyBlockSize> block{};
  auto* p = block.data();
  for (Bytes field : {Bytes(k.archive_id), Bytes(k.key_id), Bytes(k.nonce), Bytes(k.wrapped)}) {
    std::memcpy(p, field.data(), field.size());
    p += field.size();
  }
  seal(block);
  return block;
}

KeyBlock decode_key_block(Bytes block, const std::string& where) {
  if (block.size() != kKeyBlockSize) corrupt(where + ": the key block is truncated");
  if (!sealed(block)) corrupt(where + ": key block checksum mismatch");
  KeyBlock k;
  const auto* p = block.data();
  for (auto field : {std::span<std::byte>(k.archive_id), std::span<std::byte>(k.key_id),
                     std::span<std::byte>(k.nonce), std::span<std::byte>(k.wrapped)}) {
    std::memcpy(field.data(), p, field.size());
    p += field.size();
  }
  return k;
}

std::vector<std::byte> encode_kms_record(const KmsKey& k) {
  std::vector<std::byte> out(kms_record_size(k));
  put_le<std::uint16_t>(out.data(), static_cast<std::uint16_t>(k.key_id.size()));
  put_le<std::uint16_t>(out.data() + 2, static_cast<std::uint16_t>(k.wrapped.size()));
  std::memcpy(out.data() + 4, k.key_id.data(), k.key_id.size());
  std::memcpy(out.data() + 4 + k.key_id.size(), k.wrapped.data(), k.wrapped.size());
  put_le<std::uint64_t>(out.data() + out.size() - 8, hash64(Bytes(out).first(out.size() - 8)));
  return out;
}

KmsKey decode_kms_record(Bytes in, const std::string& where) {
  if (in.size() < 4) corrupt(where + ": the KMS record is truncated");
  const std::size_t id_size = get_le<std::uint16_t>(in.data());
  const std::size_t wrapped_size = get_le<std::uint16_t>(in.data() + 2);
  if (id_size == 0 || id_size > kMaxKmsKeyId || wrapped_size == 0 || wrapped_size > kMaxKmsWrapped)
    corrupt(where + ": the KMS record's lengths (" + std::to_string(id_size) + ", " +
            std::to_string(wrapped_size) + ") are out of bounds");
  const std::size_t size = 4 + id_size + wrapped_size + 8;
  if (in.size() < size) corrupt(where + ": the KMS record is truncated");
  if (!sealed(in.first(size))) corrupt(where + ": KMS record checksum mismatch");
  KmsKey k;
  k.key_id.assign(reinterpret_cast<const char*>(in.data()) + 4, id_size);
  k.wrapped.assign(in.data() + 4 + id_size, in.data() + 4 + id_size + wrapped_size);
  // Whatever holds the record (an archive, an object's metadata, a journal), its key is an ARN
  // in full, checked here where it enters: its region becomes part of a host name.
  s3::parse_kms_key_arn(k.key_id, where + ": the KMS record's key");
  return k;
}

std::vector<std::byte> encode_header(const Header& h) {
  std::array<std::byte, kHeaderSize> out{};
  put_magic(out.data(), kMagic);
  put_le<std::uint16_t>(out.data() + 8, h.version_major);
  put_le<std::uint16_t>(out.data() + 10, h.version_minor);
  put_le<std::uint32_t>(out.data() + 12, static_cast<std::uint32_t>(h.size()));
  put_le<std::uint32_t>(out.data() + 16, h.chunk_size);
  put_le<std::uint32_t>(out.data() + 20,
                        (h.key ? kFlagEncrypted : 0) | (h.key && h.kms ? kFlagKms : 0));
  seal(out);
  std::vector<std::byte> bytes(out.begin(), out.end());
  if (h.key) {
    const auto block = encode_key_block(*h.key);
    bytes.insert(bytes.end(), block.begin(), block.end());
    if (h.kms) {
      const auto record = encode_kms_record(*h.kms);
      bytes.insert(bytes.end(), record.begin(), record.end());
    }
  }
  return bytes;
}

Header decode_header(Bytes in) {
  if (in.size() < kHeaderSize) corrupt("archive header: truncated (the file is too short)");
  auto head = in.first(kHeaderSize);
  if (!has_magic(head, kMagic)) corrupt("archive header: bad magic number (not a nubo archive)");
  Header h;
  h.version_major = get_le<std::uint16_t>(head.data() + 8);
  h.version_minor = get_le<std::uint16_t>(head.data() + 10);
  if (h.version_major < kOldestMajor || h.version_major > kVersionMajor) {
    throw Error(Errc::unsupported, "archive header: format version " +
                                       std::to_string(h.version_major) + "." +
                                       std::to_string(h.version_minor) +
                                       " is not supported: this nubo reads versions 1.x and 2.x");
  }
  if (!sealed(head)) corrupt("archive header: checksum mismatch");
  const auto flags = get_le<std::uint32_t>(head.data() + 20);
  const auto known = h.version_major >= 2 ? kFlagEncrypted | kFlagKms : 0u;
  if ((flags & ~known) != 0) {
    throw Error(Errc::unsupported, "archive header: flags " + std::to_string(flags) +
                                       " are not understood by this nubo (a newer one made it)");
  }
  const auto size = get_le<std::uint32_t>(head.data() + 12);
  const bool encrypted = (flags & kFlagEncrypted) != 0;
  if ((flags & kFlagKms) && !encrypted) corrupt("archive header: a KMS record without encryption");
  const std::size_t fixed = kHeaderSize + (encrypted ? kKeyBlockSize : 0);
  if ((flags & kFlagKms) ? size <= fixed || size > kMaxHeaderSize : size != fixed)
    corrupt("archive header: bad size");
  h.chunk_size = get_le<std::uint32_t>(head.data() + 16);
  if (h.chunk_size < kMinChunkSize || h.chunk_size > kMaxChunkSize) {
    corrupt("archive header: chunk size " + std::to_string(h.chunk_size) + " out of range");
  }
  if (in.size() < size) corrupt("archive header: truncated (the file is too short)");
  if (encrypted) h.key = decode_key_block(in.subspan(kHeaderSize, kKeyBlockSize), "archive header");
  if (flags & kFlagKms) {
    h.kms = decode_kms_record(in.subspan(fixed), "archive header");
    if (h.size() != size) corrupt("archive header: bad size");
  }
  return h;
}

std::array<std::byte, kRecordHeaderSize> encode_record_header(const RecordHeader& r) {
  std::array<std::byte, kRecordHeaderSize> out{};
  put_magic(out.data(), kRecordMagic);
  out[4] = static_cast<std::byte>(r.type);
  out[5] = static_cast<std::byte>(r.codec);
  out[6] = static_cast<std::byte>(r.level);
  out[7] = std::byte{0};  // flags
  put_le<std::uint32_t>(out.data() + 8, r.entry);
  put_le<std::uint32_t>(out.data() + 12, r.raw_size);
  put_le<std::uint64_t>(out.data() + 16, r.offset);
  put_le<std::uint32_t>(out.data() + 24, r.stored_size);
  put_le<std::uint32_t>(out.data() + 28, r.payload_check);
  put_le<std::uint64_t>(out.data() + 32, r.hash);
  seal(out);
  return out;
}

RecordHeader decode_record_header(Bytes in, std::uint32_t chunk_size, std::uint32_t seal_overhead) {
  if (in.size() < kRecordHeaderSize) corrupt("record header: truncated");
  in = in.first(kRecordHeaderSize);
  if (!has_magic(in, kRecordMagic)) corrupt("record header: bad magic");
  if (!sealed(in)) corrupt("record header: checksum mismatch");
  RecordHeader r;
  auto type = std::to_integer<std::uint8_t>(in[4]);
  auto codec = std::to_integer<std::uint8_t>(in[5]);
  if (type < 1 || type > 5) corrupt("record header: unknown record type " + std::to_string(type));
  if (!valid_chunk_codec(codec)) corrupt("record header: unknown codec " + std::to_string(codec));
  r.type = static_cast<RecordType>(type);
  r.codec = static_cast<ChunkCodec>(codec);
  r.level = static_cast<std::int8_t>(std::to_integer<std::uint8_t>(in[6]));
  r.entry = get_le<std::uint32_t>(in.data() + 8);
  r.raw_size = get_le<std::uint32_t>(in.data() + 12);
  r.offset = get_le<std::uint64_t>(in.data() + 16);
  r.stored_size = get_le<std::uint32_t>(in.data() + 24);
  r.payload_check = get_le<std::uint32_t>(in.data() + 28);
  r.hash = get_le<std::uint64_t>(in.data() + 32);
  const std::string kind = r.type == RecordType::bundle ? "bundle record" : "chunk record";
  switch (r.type) {
    case RecordType::chunk:
    case RecordType::bundle:
      if (r.raw_size == 0 || r.raw_size > chunk_size) {
        corrupt(kind + ": raw size " + std::to_string(r.raw_size) + " is outside 1.." +
                std::to_string(chunk_size));
      }
      if (r.stored_size > max_stored(r.codec, r.raw_size, seal_overhead)) {
        corrupt(kind + ": stored size " + std::to_string(r.stored_size) + " exceeds what a " +
                std::string(chunk_codec_name(r.codec)) + " chunk of " + std::to_string(r.raw_size) +
                " bytes may have");
      }
      if (r.type == RecordType::chunk && r.offset % chunk_size != 0)
        corrupt("chunk record: offset not on a chunk boundary");
      if (r.type == RecordType::bundle && r.offset + 32 > r.raw_size)
        corrupt("bundle record: its entry records would start past its end");
      break;
    case RecordType::index:
      // Version 2 compresses the index (zstd); the raw size is then its decoded size.
      if ((r.codec != ChunkCodec::none && r.codec != ChunkCodec::zstd) || r.offset != 0 ||
          r.stored_size > r.raw_size + seal_overhead ||
          (r.codec == ChunkCodec::none && r.raw_size + seal_overhead != r.stored_size)) {
        corrupt("index record: inconsistent fields");
      }
      break;
    case RecordType::entry:
    case RecordType::end:
      if (r.codec != ChunkCodec::none || r.raw_size + seal_overhead != r.stored_size ||
          r.offset != 0) {
        corrupt("record header: inconsistent fields for a non-chunk record");
      }
      if (r.type == RecordType::entry && r.raw_size > kMaxEntryPayload) {
        corrupt("entry record: payload of " + std::to_string(r.stored_size) +
                " bytes is too large");
      }
      if (r.type == RecordType::end && r.raw_size != kEndPayloadSize) {
        corrupt("end record: payload size " + std::to_string(r.raw_size));
      }
      break;
  }
  return r;
}

std::string_view entry_kind_name(EntryKind k) {
  switch (k) {
    case EntryKind::file:
      return "file";
    case EntryKind::directory:
      return "directory";
    case EntryKind::symlink:
      return "symlink";
  }
  return "unknown";
}

void encode_entry_to(ByteWriter& w, const EntryMeta& e) {
  w.put<std::uint8_t>(static_cast<std::uint8_t>(e.kind));
  w.put_zeros(3);
  w.put<std::uint32_t>(e.mode);
  w.put<std::uint64_t>(e.size);
  w.put<std::int64_t>(e.mtime_ns);
  w.put<std::uint16_t>(static_cast<std::uint16_t>(e.path.size()));
  w.put<std::uint16_t>(static_cast<std::uint16_t>(e.link_target.size()));
  w.put_zeros(4);
  w.put_bytes(as_bytes(e.path));
  w.put_bytes(as_bytes(e.link_target));
}

EntryMeta decode_entry_from(ByteReader& r) {
  EntryMeta e;
  auto kind = r.get<std::uint8_t>();
  if (kind > 2) corrupt(r.what() + ": unknown entry kind " + std::to_string(kind));
  e.kind = static_cast<EntryKind>(kind);
  r.skip(3);
  e.mode = r.get<std::uint32_t>();
  if (e.mode & ~07777u) corrupt(r.what() + ": mode has bits beyond 07777");
  e.size = r.get<std::uint64_t>();
  if (e.size > kMaxFileSize) {
    corrupt(r.what() + ": size " + std::to_string(e.size) + " is beyond the largest file (" +
            std::to_string(kMaxFileSize) + " bytes)");
  }
  e.mtime_ns = r.get<std::int64_t>();
  auto path_len = r.get<std::uint16_t>();
  auto target_len = r.get<std::uint16_t>();
  r.skip(4);
  if (path_len == 0 || path_len > kMaxPathLength) {
    corrupt(r.what() + ": path length " + std::to_string(path_len) + " is outside 1.." +
            std::to_string(kMaxPathLength));
  }
  if (target_len > kMaxPathLength) corrupt(r.what() + ": link target too long");
  e.path = r.take_string(path_len);
  e.link_target = r.take_string(target_len);
  if (e.kind != EntryKind::symlink && !e.link_target.empty()) {
    corrupt(r.what() + ": '" + e.path + "' is not a symlink but has a link target");
  }
  if (e.kind == EntryKind::symlink && e.link_target.empty()) {
    corrupt(r.what() + ": symlink '" + e.path + "' has no target");
  }
  if (e.kind != EntryKind::file && e.size != 0) {
    corrupt(r.what() + ": " + std::string(entry_kind_name(e.kind)) + " '" + e.path +
            "' has a size");
  }
  return e;
}

std::vector<std::byte> encode_entry(const EntryMeta& e) {
  std::vector<std::byte> out;
  ByteWriter w(out);
  encode_entry_to(w, e);
  return out;
}

EntryMeta decode_entry(Bytes in) {
  ByteReader r(in, "entry record");
  auto e = decode_entry_from(r);
  if (r.remaining() != 0) corrupt("entry record: trailing bytes after the entry");
  return e;
}

std::vector<EntryMeta> decode_bundle_table(Bytes raw, std::uint64_t table_offset) {
  if (table_offset >= raw.size()) corrupt("bundle: no entry records");
  ByteReader r(raw.subspan(static_cast<std::size_t>(table_offset)), "bundle entry record");
  std::vector<EntryMeta> out;
  // Each record takes at least 33 bytes of what is left: bounded by the bundle.
  while (r.remaining() > 0) out.push_back(decode_entry_from(r));
  return out;
}

std::vector<std::byte> encode_end(const EndPayload& e) {
  std::vector<std::byte> out;
  ByteWriter w(out);
  w.put_bytes(e.hash.bytes);
  w.put<std::uint64_t>(e.chunks);
  w.put<std::uint64_t>(e.size);
  return out;
}

EndPayload decode_end(Bytes in) {
  ByteReader r(in, "end record");
  EndPayload e;
  std::memcpy(e.hash.bytes.data(), r.take(16).data(), 16);
  e.chunks = r.get<std::uint64_t>();
  e.size = r.get<std::uint64_t>();
  if (r.remaining() != 0) corrupt("end record: trailing bytes");
  return e;
}

void encode_index_entry(ByteWriter& w, const IndexEntry& e) {
  w.put<std::uint64_t>(e.record_offset);
  w.put<std::uint64_t>(e.first_chunk);
  w.put<std::uint64_t>(e.chunk_count);
  w.put_bytes(e.hash.bytes);
  w.put<std::uint32_t>(e.bundle_offset);
  w.put<std::uint8_t>(e.bundled ? 1 : 0);
  w.put_zeros(3);
  encode_entry_to(w, e.meta);
}

IndexEntry decode_index_entry(ByteReader& r, bool v2) {
  IndexEntry e;
  e.record_offset = r.get<std::uint64_t>();
  e.first_chunk = r.get<std::uint64_t>();
  e.chunk_count = r.get<std::uint64_t>();
  std::memcpy(e.hash.bytes.data(), r.take(16).data(), 16);
  if (v2) {
    e.bundle_offset = r.get<std::uint32_t>();
    auto flags = r.get<std::uint8_t>();
    if (flags > 1) corrupt("index: an entry has unknown flags");
    e.bundled = flags == 1;
    r.skip(3);
  }
  e.meta = decode_entry_from(r);
  return e;
}

void encode_index_chunk(ByteWriter& w, const IndexChunk& c) {
  w.put<std::uint64_t>(c.record_offset);
  w.put<std::uint32_t>(c.raw_size);
  w.put<std::uint32_t>(c.stored_size);
  w.put<std::uint64_t>(c.raw_hash);
  w.put<std::uint8_t>(static_cast<std::uint8_t>(c.codec));
  w.put<std::int8_t>(c.level);
  w.put<std::uint8_t>(c.bundle ? 1 : 0);
  w.put_zeros(5);
}

IndexChunk decode_index_chunk(ByteReader& r) {
  IndexChunk c;
  c.record_offset = r.get<std::uint64_t>();
  c.raw_size = r.get<std::uint32_t>();
  c.stored_size = r.get<std::uint32_t>();
  c.raw_hash = r.get<std::uint64_t>();
  auto codec = r.get<std::uint8_t>();
  if (!valid_chunk_codec(codec)) corrupt("index: unknown codec " + std::to_string(codec));
  c.codec = static_cast<ChunkCodec>(codec);
  c.level = r.get<std::int8_t>();
  auto kind = r.get<std::uint8_t>();
  if (kind > 1) corrupt("index: unknown chunk kind " + std::to_string(kind));
  c.bundle = kind == 1;
  r.skip(5);
  return c;
}

std::vector<std::byte> encode_index(const Index& index) {
  std::vector<std::byte> out;
  ByteWriter w(out);
  w.put<std::uint64_t>(index.entries.size());
  w.put<std::uint64_t>(index.chunks.size());
  for (const auto& e : index.entries) encode_index_entry(w, e);
  for (const auto& c : index.chunks) encode_index_chunk(w, c);
  return out;
}

Index decode_index(Bytes in, std::uint16_t version_major, std::uint32_t chunk_size,
                   std::uint64_t data_begin, std::uint64_t data_end, std::uint32_t seal_overhead) {
  ByteReader r(in, "index");
  return decode_index(r, version_major, chunk_size, data_begin, data_end, seal_overhead);
}

Index decode_index(ByteReader& r, std::uint16_t version_major, std::uint32_t chunk_size,
                   std::uint64_t data_begin, std::uint64_t data_end, std::uint32_t seal_overhead) {
  const bool v2 = version_major >= 2;
  const auto size = r.remaining();
  auto entry_count = r.get<std::uint64_t>();
  auto chunk_count = r.get<std::uint64_t>();
  // Each entry takes at least 73 bytes (81 in version 2) and each chunk 32: counts that do not
  // fit the payload are refused before anything is decoded for them. Every chunk and bundle is
  // a record of the data region, at least a record header.
  const std::uint64_t min_entry = 24 + 16 + (v2 ? 8 : 0) + 32 + 1;
  if (entry_count > r.remaining() / min_entry ||
      chunk_count > (r.remaining() - entry_count * min_entry) / kIndexChunkSize) {
    corrupt("index: " + std::to_string(entry_count) + " entries and " +
            std::to_string(chunk_count) + " chunks cannot fit in " + std::to_string(size) +
            " bytes");
  }
  const auto data_size = data_end > data_begin ? data_end - data_begin : 0;
  if (chunk_count > data_size / kRecordHeaderSize) {
    corrupt("index: " + std::to_string(chunk_count) + " chunks cannot fit in the " +
            std::to_string(data_size) + " bytes of data");
  }
  // A bundle's members each have an entry record (33 bytes at least) in its raw bytes.
  const std::uint64_t max_members = chunk_size / 33;
  // Grown as entries decode, never reserved from the counts: what is held is what was read.
  Index index;
  std::uint64_t next_chunk = 0, members = 0;
  for (std::uint64_t i = 0; i < entry_count; ++i) {
    const IndexEntry* previous = i > 0 ? &index.entries.back() : nullptr;
    auto e = decode_index_entry(r, v2);
    auto where = "index: entry " + std::to_string(i) + " '" + e.meta.path + "'";
    // A bundle's members are consecutive entries that share its record.
    const bool joins_bundle =
        e.bundled && previous && previous->bundled && previous->first_chunk == e.first_chunk;
    if (e.record_offset < data_begin || e.record_offset >= data_end ||
        (previous && (joins_bundle ? e.record_offset != previous->record_offset
                                   : e.record_offset <= previous->record_offset))) {
      corrupt(where + ": record offset " + std::to_string(e.record_offset) + " out of place");
    }
    if (e.bundled) {
      members = joins_bundle ? members + 1 : 1;
      if (e.chunk_count != 0 || (!joins_bundle && e.first_chunk != next_chunk) ||
          e.first_chunk >= chunk_count || members > max_members ||
          (e.meta.kind != EntryKind::file && e.bundle_offset != 0)) {
        corrupt(where + ": its place in a bundle is out of range");
      }
      if (!joins_bundle) ++next_chunk;
    } else {
      auto expected = e.meta.kind == EntryKind::file ? chunks_for(e.meta.size, chunk_size) : 0;
      if (e.chunk_count != expected || e.first_chunk != next_chunk ||
          e.chunk_count > chunk_count - next_chunk || e.bundle_offset != 0) {
        corrupt(where + ": chunk list does not match its size");
      }
      next_chunk += e.chunk_count;
    }
    index.entries.push_back(std::move(e));
  }
  if (next_chunk != chunk_count) corrupt("index: chunks not owned by any file");
  for (std::uint64_t k = 0; k < chunk_count; ++k) index.chunks.push_back(decode_index_chunk(r));
  if (r.remaining() != 0) corrupt("index: trailing bytes");
  // Each chunk's sizes follow from its file's size, and the records lie in the data region in
  // the order of the index, one after the other: `floor` is where the last one ended. Every sum
  // below is of values already bounded (sizes by the chunk size, offsets by the data region).
  const auto sealed = [&](std::uint64_t payload) {
    return kRecordHeaderSize + payload + (payload > 0 ? seal_overhead : 0);
  };
  std::uint64_t floor = data_begin;
  for (std::uint64_t i = 0; i < entry_count; ++i) {
    const auto& e = index.entries[i];
    if (e.bundled) {
      auto& c = index.chunks[e.first_chunk];
      if (!c.bundle || c.record_offset != e.record_offset || c.raw_size == 0 ||
          c.raw_size > chunk_size ||
          c.stored_size > max_stored(c.codec, c.raw_size, seal_overhead) ||
          e.meta.size > c.raw_size || e.bundle_offset > c.raw_size - e.meta.size) {
        corrupt("index: '" + e.meta.path + "': its bundle's sizes or offset are out of range");
      }
      if (i == 0 || index.entries[i - 1].first_chunk != e.first_chunk ||
          !index.entries[i - 1].bundled) {
        c.owner = static_cast<std::uint32_t>(i);
        if (c.record_offset < floor) corrupt("index: '" + e.meta.path + "': records overlap");
        floor = c.record_offset + kRecordHeaderSize + c.stored_size;
      }
      continue;
    }
    if (e.record_offset < floor) corrupt("index: '" + e.meta.path + "': records overlap");
    floor = e.record_offset + sealed(encoded_entry_size(e.meta));
    for (std::uint64_t k = 0; k < e.chunk_count; ++k) {
      auto& c = index.chunks[e.first_chunk + k];
      auto want = chunk_bytes(e.meta.size, chunk_size, k);
      if (c.bundle || c.raw_size != want ||
          c.stored_size > max_stored(c.codec, c.raw_size, seal_overhead) ||
          c.record_offset < floor || c.record_offset >= data_end) {
        corrupt("index: file '" + e.meta.path + "' chunk " + std::to_string(k) +
                ": sizes or offset out of range");
      }
      c.owner = static_cast<std::uint32_t>(i);
      floor = c.record_offset + kRecordHeaderSize + c.stored_size;
    }
    if (e.meta.kind == EntryKind::file) floor += sealed(kEndPayloadSize);
  }
  if (floor > data_end) corrupt("index: the records it lists extend past the data");
  return index;
}

std::array<std::byte, kTrailerSize> encode_trailer(const Trailer& t) {
  std::array<std::byte, kTrailerSize> out{};
  put_le<std::uint64_t>(out.data(), t.index_offset);
  put_le<std::uint64_t>(out.data() + 8, t.index_size);
  put_magic(out.data() + 16, kTrailerMagic);
  seal(out);
  return out;
}

Trailer decode_trailer(Bytes in) {
  if (in.size() < kTrailerSize) corrupt("trailer: truncated");
  in = in.first(kTrailerSize);
  if (!has_magic(in.subspan(16), kTrailerMagic)) {
    corrupt("trailer: bad magic (the archive is incomplete or truncated)");
  }
  if (!sealed(in)) corrupt("trailer: checksum mismatch");
  Trailer t;
  t.index_offset = get_le<std::uint64_t>(in.data());
  t.index_size = get_le<std::uint64_t>(in.data() + 8);
  return t;
}

}  // namespace nubo::transfer::format
