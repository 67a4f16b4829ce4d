// Writing an archive: records appended in order through a small buffer, the index kept in
// memory as they go, and the index and trailer at the end. A writer can also take over a partial
// archive whose records up to some offset were verified (resume): it is given that offset and
// the index of what lies before it. The bytes go to an ArchiveOutput: a file or a stream, or
// the parts of an upload (pack -o s3://...), since the format only appends.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "transfer/codec/codec.hpp"
#include "transfer/file_io.hpp"
#include "transfer/format/format.hpp"
#include "transfer/hash.hpp"
#include "transfer/keys/archive_keys.hpp"

namespace nubo::transfer {

// Where an archive's bytes go, in order.
class ArchiveOutput {
 public:
  virtual ~ArchiveOutput() = default;
  virtual void write(Bytes a, Bytes b) = 0;  // appends a, then b (either may be empty)
  virtual void sync() {}                     // what was written is durable once this returns
  virtual void close() {}                    // reports a failed close
};

// A file or a stream, written from its current position.
class FdOutput : public ArchiveOutput {
 public:
  explicit FdOutput(Fd fd) : fd_(std::move(fd)) {}
  void write(Bytes a, Bytes b) override;
  void sync() override { fd_.datasync(); }
  void close() override { fd_.close(); }

 private:
  Fd fd_;
};

class ArchiveWriter {
 public:
  // Writes a fresh header to `out` and starts after it; with `encryption`, an encrypted archive
  // (format 2.1) whose every payload is sealed.
  static ArchiveWriter create(std::unique_ptr<ArchiveOutput> out, std::uint32_t chunk_size,
                              std::optional<Encryption> encryption = std::nullopt);
  // A fresh archive in the file `fd` (emptied first).
  static ArchiveWriter create(Fd fd, std::uint32_t chunk_size,
                              std::optional<Encryption> encryption = std::nullopt);
  // Continues a partial archive whose verified records end at `offset`, where `out` goes on;
  // `index` describes those records, and `cipher` is the partial archive's, when encrypted.
  static ArchiveWriter resume(std::unique_ptr<ArchiveOutput> out, std::uint32_t chunk_size,
                              std::uint64_t offset, format::Index index,
                              std::optional<ArchiveCipher> cipher = std::nullopt);
  // The same in the file `fd`, cut at `offset`.
  static ArchiveWriter resume(Fd fd, std::uint32_t chunk_size, std::uint64_t offset,
                              format::Index index,
                              std::optional<ArchiveCipher> cipher = std::nullopt);

  std::uint32_t chunk_size() const { return chunk_size_; }
  std::uint64_t offset() const { return offset_; }  // where the next record goes
  const format::Index& index() const { return index_; }
  ArchiveOutput& output() { return *out_; }

  // Returns the new entry's number.
  std::uint32_t add_entry(const format::EntryMeta& meta);
  void add_chunk(std::uint32_t entry, std::uint64_t file_offset, ChunkCodec codec, int level,
                 std::uint32_t raw_size, std::uint64_t raw_hash, Bytes payload);
  void end_file(std::uint32_t entry, const Hash128& hash);
  // A bundle (format.hpp): `members` are the entries whose records end its raw bytes, from
  // `table_offset`, and `hashes` their contents' XXH3-128, in the same order.
  void add_bundle(const std::vector<format::EntryMeta>& members, const std::vector<Hash128>& hashes,
                  ChunkCodec codec, int level, std::uint32_t raw_size, std::uint32_t table_offset,
                  std::uint64_t raw_hash, Bytes payload);

  void flush();  // hands buffered records to the kernel
  // Writes the index and the trailer, flushes; returns the archive's size.
  std::uint64_t finish();

 private:
  ArchiveWriter(std::unique_ptr<ArchiveOutput> out, std::uint32_t chunk_size)
      : out_(std::move(out)), chunk_size_(chunk_size) {}
  static std::vector<std::byte> header(std::uint32_t chunk_size,
                                       const std::optional<Encryption>& encryption);
  // `payload_check` (format.hpp) is computed here unless given (a raw chunk's is its hash's).
  // Encrypted, the payload is sealed and the hash masked here.
  void put(const format::RecordHeader& r, Bytes payload,
           const std::uint32_t* payload_check = nullptr);
  // The stored size of a payload of `n` bytes: sealed ones are longer.
  std::uint32_t stored_size(std::size_t n) const {
    return static_cast<std::uint32_t>(cipher_ && n > 0 ? n + format::kSealOverhead : n);
  }

  std::unique_ptr<ArchiveOutput> out_;
  std::uint32_t chunk_size_;
  std::uint64_t offset_ = 0;  // logical end, buffer included
  std::vector<std::byte> buffer_;
  format::Index index_;
  std::optional<ArchiveCipher> cipher_;
  std::vector<std::byte> sealed_;  // the payload being written, sealed
};

}  // namespace nubo::transfer
