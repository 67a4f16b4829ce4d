// Compressed, resumable archives: pack files and directories into a .nubo archive, unpack,
// list and verify it, and read any byte range of any file in it (docs/transfer.md; the format is
// docs/archive-format.md).
//
// Files are cut into chunks, each compressed on its own (zstd, lz4, or stored raw when that does
// not pay) and checksummed (XXH3-64 per chunk, XXH3-128 per file). Reading, compressing,
// hashing and writing run concurrently in bounded memory. A pack or unpack that is killed
// resumes, when run again with the same arguments, after the last verified chunk; files appear
// under their final name only when complete and verified.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "nubo/export.hpp"

namespace nubo::transfer {

// How chunks are compressed. `automatic` picks, per chunk, among none, lz4 and zstd levels: the
// one that finishes soonest given the data, the cores and the output speed (PackOptions::
// target_rate, or measured), preferring the smaller output among choices about as fast; and
// `floats` for chunks that look like float tensors. `floats` ("float") is zstd over the byte
// planes of bf16, fp16 or fp32 values (exponents together), for checkpoints and model weights;
// exact for every bit pattern. `zero` is how a chunk of zeros is stored (its length alone):
// summaries count it, no option chooses it. Values are part of the C ABI (nubo_codec).
enum class Codec { automatic = 0, none = 1, lz4 = 2, zstd = 3, zero = 4, floats = 5 };
// Chunks counted by how each was stored: counts[Codec::zstd]. The slots leave room for codecs
// to come (NUBO_CODEC_SLOTS in C); the slot of `automatic` is always 0.
struct ChunkCounts {
  std::array<std::uint64_t, 8> slots{};
  std::uint64_t& operator[](Codec c) { return slots.at(static_cast<std::size_t>(c)); }
  std::uint64_t operator[](Codec c) const { return slots.at(static_cast<std::size_t>(c)); }
};
NUBO_API std::string_view codec_name(Codec c) noexcept;
// "auto", "none", "lz4", "zstd", "float" (any case); Error(invalid_argument) otherwise.
NUBO_API Codec parse_codec(std::string_view name);
// A codec as users choose it, from the library's own table: tools and bindings read names,
// levels and help here rather than restating them (as zstd's ZSTD_cParam_getBounds).
struct CodecInfo {
  Codec codec = Codec::zstd;
  std::string_view name;                                // as parse_codec takes it
  int min_level = 0, max_level = 0, default_level = 0;  // all 0: it takes no level
  std::string_view level_means;  // what a level is when not the codec's own; "" otherwise
  std::string_view help;         // a few words on when to choose it; "" when its name says it
};
// The codecs users may choose, in the order they are offered.
NUBO_API std::vector<CodecInfo> codecs();

struct Progress {
  std::uint64_t bytes_done = 0;     // logical (uncompressed) bytes finished, skipped ones included
  std::uint64_t bytes_total = 0;    // logical bytes of the whole job
  std::uint64_t bytes_written = 0;  // compressed bytes: written (pack) or read (unpack, verify)
  std::uint64_t bytes_skipped = 0;  // done by an earlier, interrupted attempt
  double rate = 0;                  // logical bytes per second over the last seconds
  double eta_seconds = -1;          // -1: not known yet
  double elapsed_seconds = 0;
  std::string_view current_file;  // valid during the callback only
  std::uint64_t files_done = 0;
  std::uint64_t files_total = 0;
};
// Called from one thread, at most every 100 ms and once at the end. Return false to cancel: the
// call then throws Error(cancelled), leaving what was done resumable.
using ProgressFn = std::function<bool(const Progress&)>;

constexpr std::uint64_t kDefaultChunkSize = 4ull << 20;
constexpr std::uint64_t kDefaultMemory = 64ull << 20;

struct PackOptions {
  // zstd by default: an archive is for keeping and moving, so it is as small as zstd makes it,
  // and the same input gives the same archive on a busy machine as on an idle one. automatic
  // trades ratio for speed against target_rate or the measured output speed.
  Codec codec = Codec::zstd;
  int level = 0;  // 0: the codec's default (zstd 3, lz4 1); with automatic, the highest zstd level
  std::uint64_t chunk_size = kDefaultChunkSize;  // 4 KiB .. 64 MiB
  int threads = 0;                               // compression threads; 0: every core
  std::uint64_t memory_limit = kDefaultMemory;   // bytes of chunk buffers in flight
  double target_rate = 0;  // bytes/s the output can take (automatic); 0: measure the writes
  bool resume = true;      // continue an interrupted pack of the same sources into `archive`
  bool sync = true;        // fdatasync at checkpoints and before the final rename
  // Left out, as rsync's --exclude and --include (docs/transfer.md, "Filters"): an entry
  // matching an exclude pattern, unless it matches an include pattern.
  std::vector<std::string> exclude, include;
  ProgressFn progress;
  // Encrypt with the key in this file (made by keygen): every record sealed with AES-256-GCM
  // under a data key of the archive's own, which the key wraps (docs/archive-format.md,
  // "Encryption"); or "kms:KEY" (a KMS key id, alias/NAME or ARN): the wrapping key comes from
  // AWS KMS, and readers need no key. Empty: not encrypted.
  std::string key_file;
  // pack -o s3://...: a cancelled pack leaves its upload on the server for the same pack to
  // continue (its parts are billed until then), as cp's --keep-partial does. By default a
  // cancel aborts the upload. A local pack always keeps its "<archive>.part" for a rerun, and a
  // killed pack leaves everything as it was.
  bool keep_partial = false;
  // An archive already at `archive` that is what this pack would make of the sources now
  // (archive_difference says none) is kept: the pack only clears what an earlier attempt left
  // (killed once the archive was whole) and returns at once, with summary.up_to_date. Off, an
  // archive there is replaced. nubo-xfer pack sets it unless -f.
  bool skip_unchanged = false;
};

// Writes a fresh random key to `path` (64 hexadecimal digits, mode 0600) for key_file. Never
// replaces an existing file: Error(invalid_argument).
NUBO_API void keygen(const std::string& path);

struct UnpackOptions {
  int threads = 0;
  std::uint64_t memory_limit = kDefaultMemory;
  bool resume = true;  // keep files and chunks an interrupted unpack verified
  bool sync = true;    // fdatasync each file before renaming it into place
  // Keep setuid, setgid and sticky bits (dropped by default, as tar does for other users).
  bool preserve_special_modes = false;
  ProgressFn progress;
  // The key of an encrypted archive: its file, kms:KEY, or kms-region:REGION to let KMS be asked
  // in a region other than the configured one (docs/s3.md, "Keys held by AWS KMS").
  std::string key_file;
};

struct VerifyOptions {
  int threads = 0;
  std::uint64_t memory_limit = kDefaultMemory;
  ProgressFn progress;
  std::string key_file;  // as UnpackOptions' (a file, kms:KEY or kms-region:REGION)
};

struct Summary {
  std::uint64_t files = 0, directories = 0, symlinks = 0;
  std::uint64_t bytes = 0;          // logical bytes of file content
  std::uint64_t bytes_stored = 0;   // the archive's size (pack) or compressed bytes read
  std::uint64_t bytes_skipped = 0;  // already done by an interrupted attempt (or up to date)
  std::uint64_t chunks = 0;
  ChunkCounts chunks_by_codec{};  // of chunks
  double seconds = 0;
  bool resumed = false;  // an interrupted attempt was continued
  // Bytes moved over the network: uploaded by pack -o s3://..., fetched from s3://... by unpack
  // and verify. 0 for local archives.
  std::uint64_t bytes_transferred = 0;
  // pack with skip_unchanged: the archive was already what it would have made; nothing was
  // written (bytes_skipped is every byte).
  bool up_to_date = false;
  // Seconds the work waited on the network, summed over the threads that waited: unpack and
  // verify for ranges not yet fetched from the store, pack for the store to take its parts. 0
  // for local archives; near `seconds` (or above it) when the network, not the work, sets the
  // pace.
  double network_wait_seconds = 0;
};

// Packs `sources` (files, directories recursively, symlinks as links) into `archive`. A
// directory or file is stored under its own name ("data/x" for source "data"); "." or "dir/."
// stores the contents without a prefix. Written to "<archive>.part" and renamed when complete;
// "<archive>.journal" records progress for resuming.
NUBO_API Summary pack(const std::vector<std::string>& sources, const std::string& archive,
                      const PackOptions& options = {});

// Unpacks every entry of `archive` into `directory` (created if missing). Each file is written
// under a temporary name beside its final one and renamed only when its hash matches. Entries
// with unsafe paths or links leading out of `directory` are refused before anything is written.
NUBO_API Summary unpack(const std::string& archive, const std::string& directory,
                        const UnpackOptions& options = {});

// Checks every checksum and every structural rule of `archive`, writing nothing. Throws
// Error(corrupt) naming the file and the chunk at the first problem.
NUBO_API Summary verify(const std::string& archive, const VerifyOptions& options = {});

enum class EntryKind { file = 0, directory = 1, symlink = 2 };
NUBO_API std::string_view entry_kind_name(EntryKind k) noexcept;

struct Entry {
  std::string path;  // relative, '/'-separated
  EntryKind kind = EntryKind::file;
  std::uint64_t size = 0;  // files: content bytes
  std::uint32_t mode = 0;  // permission bits
  std::int64_t mtime_ns = 0;
  std::string link_target;  // symlinks
  std::string hash;         // files: XXH3-128 of the content, 32 hex digits
  // files: compressed bytes in the archive. A small file is stored in a bundle with others
  // (compressed together): it has 0 chunks of its own, and its stored size is its share of the
  // bundle's, in proportion to its size.
  std::uint64_t stored_size = 0;
  std::uint64_t chunks = 0;
};

// Whether `archive` (a file or s3://BUCKET/KEY) is what packing `sources` with `options` would
// make of them now, as rsync's quick check decides: the same entries, each with the same kind,
// size, modification time, mode and link target, in chunks of the same size, encrypted when
// `options.key_file` says so (under that key). "" when it is; else the first difference, e.g.
// "'src/a.txt': its size changed". The contents are not read. A damaged or incomplete archive
// throws as list() does. nubo-xfer's rerun of a pack that completed says "up to date" with it.
NUBO_API std::string archive_difference(const std::string& archive,
                                        const std::vector<std::string>& sources,
                                        const PackOptions& options = {});

// The entries of `archive`, from its index (cheap: the data is not read). An encrypted archive's
// names are sealed: it needs `key_file`.
NUBO_API std::vector<Entry> list(const std::string& archive, const std::string& key_file = {});

// What pack and send would take from `sources` with these filters, in the order they take it,
// without reading any content (--dry-run). Errors as pack's for the sources and the patterns.
NUBO_API std::vector<Entry> select(const std::vector<std::string>& sources,
                                   const std::vector<std::string>& exclude = {},
                                   const std::vector<std::string>& include = {});

// Random access to the files of an archive: any byte range of any file, each chunk read
// verified against its checksum. Several threads may use one Reader at once.
class NUBO_API Reader {
 public:
  explicit Reader(const std::string& archive, const std::string& key_file = {});
  ~Reader();
  Reader(Reader&&) noexcept;
  Reader& operator=(Reader&&) noexcept;

  const std::vector<Entry>& entries() const;
  std::uint32_t chunk_size() const;
  // The entry at `path`, or nullptr.
  const Entry* find(std::string_view path) const;
  // Reads up to out.size() bytes of the file at `path` from `offset`; returns how many (fewer
  // only at the end of the file). Error(not_found) for no such file, Error(corrupt) for a chunk
  // that fails its checksum.
  std::size_t read(std::string_view path, std::uint64_t offset, std::span<std::byte> out) const;
  // The same into a new buffer of at most `size` bytes.
  std::vector<std::byte> read(std::string_view path, std::uint64_t offset, std::size_t size) const;
  // Bytes fetched so far from the store an s3:// archive lives in (0 for a local archive).
  std::uint64_t bytes_fetched() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace nubo::transfer
