// The archive format, version 2 (docs/archive-format.md is the specification; version 1 is still
// read):
//
//   header (64 bytes) | record... | index record | trailer (32 bytes)
//
// Every record is a 48-byte header, checksummed, followed by its payload. A large file is an
// entry record, one chunk record per chunk (each chunk compressed on its own, with the XXH3-64 of
// its raw bytes), and an end record with the XXH3-128 of the whole content. Small files,
// directories and symlinks travel in bundles: one record holding the contents of several entries
// and then their entry records, compressed together, as tar | zstd would. The index (compressed)
// repeats every entry and chunk, so listing and random access read only the trailer and the
// index; the records make the archive readable in one pass (resume) and let `verify` check every
// byte.
//
// This file only encodes and decodes; it does no I/O. Decoders check every field against the
// limits below and throw Error(corrupt) with a message naming what was wrong; callers prefix the
// archive, the file and the chunk.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "transfer/bytes.hpp"
#include "transfer/codec/codec.hpp"
#include "transfer/hash.hpp"
#include "transfer/paths.hpp"

namespace nubo::transfer::format {

constexpr std::uint16_t kVersionMajor = 2;
constexpr std::uint16_t kVersionMinor = 0;
constexpr std::uint16_t kEncryptedMinor = 1;  // 2.1: encrypted, the header carries a key block
constexpr std::uint16_t kKmsMinor = 2;        // 2.2: also a KMS record after the key block
constexpr std::uint16_t kOldestMajor = 1;     // version 1: no bundles, the index stored raw

constexpr std::size_t kHeaderSize = 64;
constexpr std::size_t kKeyBlockSize = 104;
// A KMS record: the key's id (an ARN, as KMS names it: at most 2048 bytes) and the KEK as KMS
// wrapped it (a CiphertextBlob: at most 6144 bytes), with two lengths and a check.
constexpr std::size_t kMaxKmsKeyId = 2048;
constexpr std::size_t kMaxKmsWrapped = 6144;
constexpr std::size_t kMaxKmsRecordSize = 4 + kMaxKmsKeyId + kMaxKmsWrapped + 8;
constexpr std::size_t kMaxHeaderSize = kHeaderSize + kKeyBlockSize + kMaxKmsRecordSize;
// What encryption adds to a record's payload: a 12-byte nonce before it, a 16-byte tag after.
constexpr std::uint32_t kSealOverhead = 28;
constexpr std::size_t kRecordHeaderSize = 48;
constexpr std::size_t kTrailerSize = 32;

// Limits every reader enforces, so that no archive can make it allocate without bound.
constexpr std::uint32_t kMinChunkSize = 4 << 10;
constexpr std::uint32_t kMaxChunkSize = 64 << 20;
constexpr std::size_t kMaxPathLength = paths::kMaxLength;
constexpr std::size_t kMaxEntryPayload = 64 + 2 * kMaxPathLength;
constexpr std::uint64_t kMaxIndexSize = 1ull << 30;
// A file's size, as off_t holds it: every sum of a size and an offset or a chunk size fits in
// 64 bits, and one that would not is refused where it is decoded.
constexpr std::uint64_t kMaxFileSize = (1ull << 63) - 1;

// An encrypted archive's key: its data key, wrapped (AES-256-GCM) by the key-encryption key the
// user holds, and what names that key, so that a reader can say which key it needs.
struct KeyBlock {
  std::array<std::byte, 16> archive_id{};  // random: binds every record to this archive
  std::array<std::byte, 16> key_id{};      // of the key-encryption key (archive_cipher.hpp)
  std::array<std::byte, 12> nonce{};       // of the wrapping
  std::array<std::byte, 48> wrapped{};     // the 32-byte data key, then the GCM tag
  bool operator==(const KeyBlock&) const = default;
};

// The key block on its own (104 bytes, its last 8 an XXH3-64 of the rest): after the header of
// an encrypted archive, and in the metadata of an encrypted object (s3/object_cipher.hpp).
// decode_key_block throws corrupt, naming `where`, on a wrong size or checksum.
std::array<std::byte, kKeyBlockSize> encode_key_block(const KeyBlock& k);
KeyBlock decode_key_block(Bytes block, const std::string& where);

// Where the KEK of an archive or object encrypted under a KMS key is: wrapped by that key, under
// an encryption context naming the archive (archive_keys.hpp).
struct KmsKey {
  std::string key_id;              // the key's ARN, as KMS answered
  std::vector<std::byte> wrapped;  // KMS's CiphertextBlob of the KEK
  bool operator==(const KmsKey&) const = default;
};
std::vector<std::byte> encode_kms_record(const KmsKey& k);
// The record at the start of `in` (which may go on past it); throws corrupt, naming `where`, on
// a length out of bounds, a truncated record or a wrong check.
KmsKey decode_kms_record(Bytes in, const std::string& where);
inline std::size_t kms_record_size(const KmsKey& k) {
  return 4 + k.key_id.size() + k.wrapped.size() + 8;
}

struct Header {
  std::uint16_t version_major = kVersionMajor;
  std::uint16_t version_minor = kVersionMinor;
  std::uint32_t chunk_size = 4 << 20;
  std::optional<KeyBlock> key;  // encrypted archives (flag 1, version 2.1)
  std::optional<KmsKey> kms;    // under a KMS key (flags 1 and 2, version 2.2)
  // Where the records begin: after the key block and the KMS record, when there are.
  std::uint64_t size() const {
    return kHeaderSize + (key ? kKeyBlockSize : 0) + (kms ? kms_record_size(*kms) : 0);
  }
  std::uint32_t seal_overhead() const { return key ? kSealOverhead : 0; }
};
std::vector<std::byte> encode_header(const Header& h);
// `in` holds the archive's first kMaxHeaderSize bytes, or all of them when it is shorter.
// Throws corrupt, or unsupported (a newer major version, or flags this version does not know).
Header decode_header(Bytes in);

enum class RecordType : std::uint8_t { entry = 1, chunk = 2, end = 3, index = 4, bundle = 5 };

struct RecordHeader {
  RecordType type = RecordType::entry;
  ChunkCodec codec = ChunkCodec::none;  // chunks only
  std::int8_t level = 0;                // chunks only: the codec level used (informational)
  std::uint32_t entry = 0;              // the entry the record belongs to (0 for the index)
  // chunks, bundles: raw bytes; the index: its decoded size; others: the payload size
  std::uint32_t raw_size = 0;
  // chunks: where the raw bytes go in the file; bundles: where the members' entry records start
  // in the raw bytes (after their contents)
  std::uint64_t offset = 0;
  std::uint32_t stored_size = 0;  // payload bytes after this header
  // The low 32 bits of the XXH3-64 of the payload as stored: a damaged payload is caught before
  // it is decoded, including damage a decoder would not notice (bits a frame does not use).
  std::uint32_t payload_check = 0;
  std::uint64_t hash = 0;  // chunks, bundles, the index: XXH3-64 of the raw bytes; others: of the
                           // payload
};
inline std::uint32_t payload_check(Bytes payload) {
  return static_cast<std::uint32_t>(hash64(payload));
}
std::array<std::byte, kRecordHeaderSize> encode_record_header(const RecordHeader& r);
// Checks the magic, the checksum and that the fields are consistent for the type, and that a
// chunk is no larger than `chunk_size` (the archive's). In an encrypted archive every payload
// is `seal_overhead` bytes longer than it would be (Header::seal_overhead).
RecordHeader decode_record_header(Bytes in, std::uint32_t chunk_size,
                                  std::uint32_t seal_overhead = 0);

enum class EntryKind : std::uint8_t { file = 0, directory = 1, symlink = 2 };
std::string_view entry_kind_name(EntryKind k);

struct EntryMeta {
  EntryKind kind = EntryKind::file;
  std::uint32_t mode = 0644;  // permission bits (07777)
  std::uint64_t size = 0;     // files: content bytes
  std::int64_t mtime_ns = 0;  // nanoseconds since the epoch
  std::string path;           // relative, normalised, '/'-separated
  std::string link_target;    // symlinks only
  bool operator==(const EntryMeta&) const = default;
};
std::vector<std::byte> encode_entry(const EntryMeta& e);
EntryMeta decode_entry(Bytes in);  // checks lengths and kind; path safety is paths.hpp's job
void encode_entry_to(ByteWriter& w, const EntryMeta& e);
EntryMeta decode_entry_from(ByteReader& r);
// The bytes encode_entry makes for `e`.
inline std::size_t encoded_entry_size(const EntryMeta& e) {
  return 32 + e.path.size() + e.link_target.size();
}

// A bundle's raw bytes: the contents of its files, in member order, then the members' entry
// records (encode_entry), starting at the record header's `offset`. An entry is bundled when it
// is a directory or a symlink, or a file whose content and entry record together take at most
// half a chunk: a bundle holds one such entry at least, and any number up to a chunk's bytes.
inline bool bundled_in_archive(const EntryMeta& e, std::uint32_t chunk_size) {
  return e.kind != EntryKind::file ||
         (e.size <= chunk_size / 2 && e.size + encoded_entry_size(e) <= chunk_size / 2);
}
// The entry records of a bundle's raw bytes after `table_offset`; throws corrupt.
std::vector<EntryMeta> decode_bundle_table(Bytes raw, std::uint64_t table_offset);

// The end record of a file: its content hash and how many chunks it had.
struct EndPayload {
  Hash128 hash;
  std::uint64_t chunks = 0;
  std::uint64_t size = 0;
};
constexpr std::size_t kEndPayloadSize = 32;
std::vector<std::byte> encode_end(const EndPayload& e);
EndPayload decode_end(Bytes in);

struct IndexChunk {
  std::uint64_t record_offset = 0;  // where its record header starts in the archive
  std::uint32_t raw_size = 0;
  std::uint32_t stored_size = 0;
  std::uint64_t raw_hash = 0;
  ChunkCodec codec = ChunkCodec::none;
  std::int8_t level = 0;
  bool bundle = false;      // a bundle record, not a file's chunk
  std::uint32_t owner = 0;  // the file it belongs to; a bundle's first member (not stored)
};
constexpr std::size_t kIndexChunkSize = 32;
// The index's record of the chunk or bundle whose header is `r`, at `record_offset`.
inline IndexChunk index_chunk(const RecordHeader& r, std::uint64_t record_offset) {
  IndexChunk c;
  c.record_offset = record_offset;
  c.raw_size = r.raw_size;
  c.stored_size = r.stored_size;
  c.raw_hash = r.hash;
  c.codec = r.codec;
  c.level = r.level;
  c.bundle = r.type == RecordType::bundle;
  return c;
}

struct IndexEntry {
  EntryMeta meta;
  std::uint64_t record_offset = 0;  // its entry record; bundled: its bundle's record
  std::uint64_t first_chunk = 0;    // files: position of its first chunk in Index::chunks;
                                    // bundled: of its bundle
  std::uint64_t chunk_count = 0;    // bundled: 0 (its bytes lie in the bundle)
  Hash128 hash;                     // files: XXH3-128 of the content
  bool bundled = false;
  std::uint32_t bundle_offset = 0;  // bundled: where its content starts in the bundle's bytes
};

struct Index {
  std::vector<IndexEntry> entries;
  std::vector<IndexChunk> chunks;
};

// The number of chunks a file of `size` bytes has: all full but the last.
inline std::uint64_t chunks_for(std::uint64_t size, std::uint32_t chunk_size) {
  return size / chunk_size + (size % chunk_size != 0 ? 1 : 0);
}
// The size of chunk k of a file of `size` bytes.
inline std::uint64_t chunk_bytes(std::uint64_t size, std::uint32_t chunk_size, std::uint64_t k) {
  return std::min<std::uint64_t>(chunk_size, size - k * chunk_size);
}

std::vector<std::byte> encode_index(const Index& index);
// One entry or chunk of an index, as encode_index lays them out (format 2; `v2` false reads
// format 1's entries, which have no bundle fields). Only the fields are checked here, not how
// they fit together: decode_index does that.
void encode_index_entry(ByteWriter& w, const IndexEntry& e);
IndexEntry decode_index_entry(ByteReader& r, bool v2);
void encode_index_chunk(ByteWriter& w, const IndexChunk& c);
IndexChunk decode_index_chunk(ByteReader& r);
// Decodes the (decoded) index of an archive of format `version_major`, from `r` (a buffer, or
// the stream of a compressed index, decoded as it goes). Checks that counts fit the payload and
// the data region (nothing is allocated beyond what was read), that each file has the chunk
// count and sizes its size implies, that a bundle's members are consecutive entries within its
// bytes, and that the records it lists follow each other in [data_begin, data_end) without
// overlapping. Stops at the first problem, before the rest of a stream is decoded.
// `seal_overhead`: as decode_record_header's, for an encrypted archive's stored sizes.
Index decode_index(ByteReader& r, std::uint16_t version_major, std::uint32_t chunk_size,
                   std::uint64_t data_begin, std::uint64_t data_end,
                   std::uint32_t seal_overhead = 0);
Index decode_index(Bytes in, std::uint16_t version_major, std::uint32_t chunk_size,
                   std::uint64_t data_begin, std::uint64_t data_end,
                   std::uint32_t seal_overhead = 0);

struct Trailer {
  std::uint64_t index_offset = 0;  // the index record's header
  std::uint64_t index_size = 0;    // header and payload
};
std::array<std::byte, kTrailerSize> encode_trailer(const Trailer& t);
Trailer decode_trailer(Bytes in);

}  // namespace nubo::transfer::format
