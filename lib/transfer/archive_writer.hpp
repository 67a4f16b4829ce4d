// Writing an archive: records appended in order through a small buffer, the index kept in
// memory as they go, and the index and trailer at the end. A writer can also take over a partial
// archive whose records up to some offset were verified (resume): it is given that offset and
// the index of what lies before it.
#pragma once

#include <cstdint>
#include <vector>

#include "transfer/codec.hpp"
#include "transfer/file_io.hpp"
#include "transfer/format.hpp"
#include "transfer/hash.hpp"

namespace nubo::transfer {

class ArchiveWriter {
 public:
  // Writes a fresh header at offset 0 of `fd` (truncating it) and starts after it.
  static ArchiveWriter create(Fd fd, std::uint32_t chunk_size);
  // Writes to a stream (a pipe, stdout) from its current position: the format only appends, so
  // nothing needs to seek; nothing can be resumed either.
  static ArchiveWriter stream(Fd fd, std::uint32_t chunk_size);
  // Continues a partial archive: `fd` is cut at `offset`, the end of its verified records, and
  // `index` describes them.
  static ArchiveWriter resume(Fd fd, std::uint32_t chunk_size, std::uint64_t offset,
                              format::Index index);

  std::uint32_t chunk_size() const { return chunk_size_; }
  std::uint64_t offset() const { return offset_; }  // where the next record goes
  const format::Index& index() const { return index_; }
  const Fd& fd() const { return fd_; }

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
  void close() { fd_.close(); }  // reports a failed close

 private:
  ArchiveWriter(Fd fd, std::uint32_t chunk_size) : fd_(std::move(fd)), chunk_size_(chunk_size) {}
  // `payload_check` (format.hpp) is computed here unless given (a raw chunk's is its hash's).
  void put(const format::RecordHeader& r, Bytes payload,
           const std::uint32_t* payload_check = nullptr);

  Fd fd_;
  std::uint32_t chunk_size_;
  std::uint64_t offset_ = 0;  // logical end, buffer included
  std::vector<std::byte> buffer_;
  format::Index index_;
};

}  // namespace nubo::transfer
