// The source side of every transfer (pack into an archive, send over the wire, and any sink to
// come): the walked entries, read in order and turned into jobs that a sink (sink.hpp) takes.
//
// A job is an entry record (for sinks that keep one per entry, such as the archive), a chunk of
// a file, the end of a file with its XXH3-128, or a bundle: whole small files gathered up to a
// chunk's size, to be compressed together, where a small file identical to one bundled before is
// a reference to it rather than its bytes. Files are read in order with FileChunks (holes never
// read); chunks the destination already verified are read for the hash only (or not at all when
// the plan carries the hash of that prefix) and yield no job.
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

#include "transfer/hash.hpp"
#include "transfer/pipeline/chunk_encoder.hpp"
#include "transfer/pipeline/file_chunks.hpp"
#include "transfer/pipeline/walk.hpp"

namespace nubo::transfer {

using Ranges = std::vector<std::pair<std::uint64_t, std::uint64_t>>;  // (first chunk, count)

// What the source does for one entry of the walk: the plan a sink makes (Sink::plan) from what
// the destination already holds. Entries with no plan are complete there and not read.
struct FilePlan {
  std::uint32_t entry = 0;  // index into the walk
  const SourceEntry* source = nullptr;
  Ranges verified;  // chunks the destination holds verified (sorted); not sent again
  // The hash of the file's first `first_chunk` chunks, when those are verified: they are then
  // not read at all (an interrupted pack continues mid-file this way).
  std::uint64_t first_chunk = 0;
  std::optional<FileHasher> prefix_hash;
  bool record_written = false;  // its entry record is already at the destination
};

constexpr std::uint32_t kNoSource = 0xffffffff;
struct BundleMember {
  std::uint32_t entry = 0;
  Hash128 hash;                      // XXH3-128 of the member's content
  std::uint32_t source = kNoSource;  // an entry below `entry` with the same content
};

struct SourceJob {
  enum class Kind : std::uint8_t { entry, chunk, file_end, bundle };
  Kind kind = Kind::chunk;
  std::uint32_t entry = 0;            // entry, chunk, file_end
  std::uint64_t index = 0;            // chunk
  std::uint32_t raw_size = 0;         // chunk, bundle: the bytes in the payload
  std::uint64_t copied = 0;           // bundle: bytes of members copied from a source
  std::uint32_t table_offset = 0;     // archive bundle: where the entry records start in raw
  bool hole = false;                  // chunk: wholly in a hole of a sparse file, not read
  std::vector<std::byte> raw;         // chunk, bundle: the bytes read
  std::vector<std::byte> stored;      // chunk, bundle: the compressed payload (encode())
  Hash128 hash;                       // file_end
  FileHasher hash_state;              // chunk, with hash_snapshots: the hash after it
  std::vector<BundleMember> members;  // bundle
  EncodedChunk encoded;               // chunk, bundle: filled by encode()
};

struct SourceOptions {
  // Files of at most one chunk travel in bundles of at most this many (0: no bundles, every
  // file in chunks). Bundled and chunked files are read side by side (see ChunkSource).
  std::uint32_t bundle_members = 0;
  // Bundles as the archive stores them (format::bundled_in_archive): in plan order, a bundle
  // closed before each entry that is not bundled; directories and links bundled too; each
  // bundle's raw bytes end with its members' entry records; no references between members.
  bool archive_bundles = false;
  bool entry_records = false;   // an entry job for every planned entry, before its chunks
  bool hash_snapshots = false;  // chunk jobs carry the file's hash state (for checkpoints)
};

// Reads the planned entries and yields their jobs. Without bundles, in plan order, each file's
// entry record, chunks and end contiguous. With bundles, small files and large ones are read as
// two sequences, each in plan order, taking turns so that both are at the same fraction of
// their bytes: the two kinds often differ (sources and text beside weights or archives), and
// interleaved, compressing one overlaps sending the other. Archive bundles keep plan order.
class ChunkSource {
 public:
  ChunkSource(const std::vector<FilePlan>& files, std::uint32_t chunk_size, SourceOptions options,
              AutoCodec* auto_codec = nullptr);
  bool operator()(SourceJob& job);  // false: nothing left

 private:
  bool small(const FilePlan& plan) const;
  std::size_t next_of_kind(std::size_t from, bool small) const;
  bool small_step(SourceJob& job);       // false: no small file left
  bool large_step(SourceJob& job);       // false: none left, or that chunk was verified already
  bool large_file_step(SourceJob& job);  // false: that chunk was verified already, skipped
  void add_to_bundle(const FilePlan& plan);
  void take_bundle(SourceJob& job);
  void warn_if_changed(const FilePlan& plan) const;

  const std::vector<FilePlan>& files_;
  std::uint32_t chunk_size_;
  SourceOptions options_;
  AutoCodec* auto_;  // told how fast files are read
  // The next file of each kind not started, and the bytes of each kind: all, and read so far.
  std::size_t next_small_ = 0, next_large_ = 0;
  std::uint64_t small_total_ = 0, large_total_ = 0, small_done_ = 0, large_done_ = 0;
  // The large file (or entry) being read.
  const FilePlan* current_ = nullptr;
  bool record_due_ = false;
  std::size_t range_ = 0;
  std::uint64_t k_ = 0;
  FileChunks file_;
  // The open bundle.
  std::vector<std::byte> bundle_raw_;
  std::vector<BundleMember> bundle_members_;
  std::vector<std::byte> bundle_table_;  // archive bundles: the members' entry records
  std::uint64_t bundle_copied_ = 0;
  // The content of every small file put in a bundle so far (up to a bound), by its hash.
  struct HashKey {
    std::size_t operator()(const Hash128& h) const noexcept;
  };
  std::unordered_map<Hash128, std::uint32_t, HashKey> carried_;
};

// The worker stage of every transfer: encodes a chunk or bundle job into job.stored
// (chunk_encoder.hpp); other jobs pass unchanged.
void encode(SourceJob& job, Codec codec, int level, AutoCodec* auto_codec);

}  // namespace nubo::transfer
