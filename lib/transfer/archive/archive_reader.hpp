// Reading an archive: the header, the trailer and the index when it is opened (the data is not
// read), then any chunk on demand, checked against its record header, the index and its XXH3-64.
// This is what unpack, verify, list and Reader share. Every error names the archive, and, for a
// chunk, the file, the chunk number and the byte ranges involved.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "transfer/byte_source.hpp"
#include "transfer/codec/codec.hpp"
#include "transfer/file_io.hpp"
#include "transfer/format/format.hpp"
#include "transfer/keys/archive_keys.hpp"

namespace nubo::transfer {

class ArchiveFile {
 public:
  // Opens and checks the archive's header, trailer and index, and that every path in it is a
  // normalised relative path that appears once. A damaged or truncated archive throws
  // Error(corrupt) saying where (for a truncated one: after which file and chunk it ends).
  // `path` is a local file or "s3://BUCKET/KEY" (byte_source.hpp). An encrypted archive needs
  // its key (the key-encryption key it was packed with): without it, Error(invalid_argument)
  // naming the key id the archive asks for.
  static ArchiveFile open(const std::string& path, const KeySource& keys = {});
  // The same over a source already open (its name() names it in messages).
  static ArchiveFile open(std::shared_ptr<ByteSource> source, const KeySource& keys = {});

  const std::string& path() const { return source_->name(); }
  const ByteSource& source() const { return *source_; }
  std::uint32_t chunk_size() const { return header_.chunk_size; }
  const format::Index& index() const { return index_; }
  std::uint64_t size() const { return size_; }
  std::uint64_t data_begin() const { return header_.size(); }
  std::uint64_t data_end() const { return trailer_.index_offset; }
  const format::Header& header() const { return header_; }
  // XXH3-64 of the index: identifies the archive's content (unpack's journal uses it).
  std::uint64_t id() const { return id_; }

  const format::IndexChunk& chunk(std::size_t entry, std::uint64_t k) const {
    return index_.chunks[index_.entries[entry].first_chunk + k];
  }
  // "<archive>: file '<path>' chunk <k> of <n> (bytes <a>..<b>, record at archive offset <o>)"
  std::string chunk_context(std::size_t entry, std::uint64_t k) const;

  // Reads chunk k of file `entry`, its record header and payload, into `record` (I/O only).
  void read_chunk(std::size_t entry, std::uint64_t k, std::vector<std::byte>& record) const;
  // Checks the record read by read_chunk against the index, decodes its payload and checks the
  // XXH3-64. Returns the chunk's bytes: in `raw` (resized to the raw size), or, for a chunk
  // stored raw, in `record` itself (no copy). Throws Error(corrupt) naming the chunk.
  Bytes decode_chunk(std::size_t entry, std::uint64_t k, Bytes record, std::vector<std::byte>& raw,
                     Decompressor& decompressor) const;

  // The bundle holding entry `entry` (a bundled one, format.hpp): its record, read (I/O only),
  // then decoded and checked: its XXH3-64, and its entry records against the index's entries
  // from its first member on. Returns its raw bytes (in `raw`, or in `record` when stored raw).
  void read_bundle(std::size_t entry, std::vector<std::byte>& record) const;
  Bytes decode_bundle(std::size_t entry, Bytes record, std::vector<std::byte>& raw,
                      Decompressor& decompressor) const;
  // A bundled file's content within its decoded bundle.
  Bytes bundled_content(std::size_t entry, Bytes bundle) const {
    const auto& e = index_.entries[entry];
    return bundle.subspan(e.bundle_offset, static_cast<std::size_t>(e.meta.size));
  }
  // The entries of the bundle that holds `entry`: [first, end).
  std::pair<std::size_t, std::size_t> bundle_members(std::size_t entry) const;
  // "<archive>: bundle of entries '<first>'..'<last>' (record at archive offset <o>)"
  std::string bundle_context(std::size_t entry) const;

  // The records the index repeats: each entry's entry record, and each file's end record after
  // its last chunk (entries not bundled). Checked against the index; each returns the offset
  // just past the record.
  std::uint64_t check_entry_record(std::size_t entry) const;
  std::uint64_t check_end_record(std::size_t entry) const;
  // Where file `entry`'s end record must be: right after its last chunk (or its entry record).
  std::uint64_t end_record_offset(std::size_t entry) const;

  // The record header in `bytes`, of the record at `record_offset`: checked (format.hpp), its
  // hash field unmasked in an encrypted archive.
  format::RecordHeader record_header(Bytes bytes, std::uint64_t record_offset) const;
  // The payload of record `r` at `record_offset` as it was before it was sealed: `stored`
  // itself, or, encrypted, opened into `out`; Error(corrupt) at `where` when it does not
  // authenticate.
  Bytes open_payload(const format::RecordHeader& r, std::uint64_t record_offset, Bytes stored,
                     std::vector<std::byte>& out, const std::string& where) const;

 private:
  void read_record(const format::IndexChunk& c, const std::string& where,
                   std::vector<std::byte>& record) const;
  // Checks a chunk or bundle record's payload against `c`, decodes it and checks its XXH3-64.
  Bytes decode_payload(const format::IndexChunk& c, const format::RecordHeader& r, Bytes record,
                       std::vector<std::byte>& raw, Decompressor& decompressor,
                       const std::string& where) const;

  std::shared_ptr<ByteSource> source_;
  format::Header header_;
  format::Trailer trailer_;
  format::Index index_;
  std::uint64_t size_ = 0;
  std::uint64_t id_ = 0;
  std::optional<ArchiveCipher> cipher_;
};

// For a reader that goes through the chunk table in order (unpack, verify): before it reads a
// chunk or bundle record, the records after it are announced to the source (will_need), up to
// the source's prefetch().ahead bytes, in windows of up to its prefetch().window, so that a
// remote archive is fetched in a few large requests in flight at once rather than one round trip
// per record. The first windows are small (kFirstWindow, then doubling), so that the work starts
// after one short request rather than a full window. Used from one thread.
class ReadAhead {
 public:
  static constexpr std::uint64_t kFirstWindow = 1 << 20;
  static constexpr std::uint64_t kGap = 64 << 10;  // bytes between records a window spans
  explicit ReadAhead(const ArchiveFile& archive) : archive_(archive) {}
  void chunk(std::size_t entry, std::uint64_t k) {
    reading(archive_.index().entries[entry].first_chunk + k);
  }
  void bundle(std::size_t entry) { reading(archive_.index().entries[entry].first_chunk); }

 private:
  void reading(std::uint64_t position);

  const ArchiveFile& archive_;
  std::uint64_t next_ = 0;      // the first position not announced yet
  std::uint64_t consumed_ = 0;  // positions before it are read or passed over
  std::uint64_t ahead_ = 0;     // bytes of the records announced and not read yet
  unsigned windows_ = 0;        // windows announced so far (the first ones are smaller)
};

// Where a damaged archive stops making sense: walks the records from the start and describes
// the last one that is whole ("the archive ends inside file 'x' chunk 3 of 5"). For messages.
// In an encrypted archive the names are sealed: it says where, not inside which file.
std::string describe_damage(const Fd& fd, const format::Header& header);

}  // namespace nubo::transfer
