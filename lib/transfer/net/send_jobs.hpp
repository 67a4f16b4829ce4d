// What a send's pipeline moves (see send.cpp): the producer reads the files in walk order and
// yields jobs, a worker turns each job into a message for the wire, and the streams take the
// messages in order. A job is a chunk of a large file, the end of one (its whole hash), or a
// bundle: whole small files gathered up to a chunk's size, compressed together.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "nubo/net.hpp"
#include "transfer/auto_codec.hpp"
#include "transfer/file_chunks.hpp"
#include "transfer/file_io.hpp"
#include "transfer/hash.hpp"
#include "transfer/net/send_queue.hpp"
#include "transfer/net/wire.hpp"
#include "transfer/walk.hpp"

namespace nubo::transfer::net {

using Ranges = std::vector<std::pair<std::uint64_t, std::uint64_t>>;

// A file to send and the chunks the receiver already verified (sorted).
struct FilePlan {
  std::uint32_t entry = 0;
  const SourceEntry* source = nullptr;
  Ranges verified;
};

struct SendJob {
  enum class Kind : std::uint8_t { chunk, file_end, bundle };
  Kind kind = Kind::chunk;
  std::uint32_t entry = 0;              // chunk, file_end
  std::uint64_t index = 0;              // chunk
  std::uint32_t raw_size = 0;           // chunk, bundle: the bytes in the payload
  std::uint64_t copied = 0;             // bundle: bytes of members copied from a source
  bool hole = false;                    // chunk: wholly in a hole of a sparse file, not read
  std::vector<std::byte> raw;           // chunk, bundle: the bytes read
  Hash128 hash;                         // file_end
  std::vector<BundleMember> members;    // bundle
  ChunkCodec codec = ChunkCodec::none;  // what encode_job chose
  OutMsg out;                           // the message, filled by encode_job
};

// Reads every file to send, hashing all of it. A file of at most one chunk that an earlier
// attempt did not partly verify is small: it goes into the open bundle (written densely at the
// receiver: small files are not worth keeping sparse), which is yielded when the next small
// file would not fit (in bytes or members), and at the end. A small file whose content
// (XXH3-128) an earlier small file of this send had goes in as a copy of that one, without its
// bytes. A larger file yields its chunks not yet verified, then its end.
//
// Small files and large ones are read as two sequences, each in walk order, taking turns so
// that both are at the same fraction of their bytes: they end together. The two kinds often
// differ (sources and text beside images, weights or archives), and interleaved, compressing
// one overlaps sending the other instead of the link and the cores each idling in turn.
class Producer {
 public:
  Producer(const std::vector<FilePlan>& files, std::uint32_t chunk_size);
  bool operator()(SendJob& job);  // false: nothing left

 private:
  bool small(const FilePlan& plan) const;
  std::size_t next_of_kind(std::size_t from, bool small) const;
  bool small_step(SendJob& job);       // false: no small file left
  bool large_step(SendJob& job);       // false: none left, or that chunk was verified already
  bool large_file_step(SendJob& job);  // false: that chunk was verified already, skipped
  void add_to_bundle(const FilePlan& plan);
  void take_bundle(SendJob& job);

  const std::vector<FilePlan>& files_;
  std::uint32_t chunk_size_;
  // The next file of each kind not started, and the bytes of each kind: all, and read so far.
  std::size_t next_small_ = 0, next_large_ = 0;
  std::uint64_t small_total_ = 0, large_total_ = 0, small_done_ = 0, large_done_ = 0;
  // The large file being read.
  const FilePlan* current_ = nullptr;
  std::size_t range_ = 0;
  std::uint64_t k_ = 0;
  FileChunks file_;
  // The open bundle.
  std::vector<std::byte> bundle_raw_;
  std::vector<BundleMember> bundle_members_;
  std::uint64_t bundle_copied_ = 0;
  // The content of every small file put in a bundle so far (up to a bound), by its hash.
  struct HashKey {
    std::size_t operator()(const Hash128& h) const noexcept;
  };
  std::unordered_map<Hash128, std::uint32_t, HashKey> carried_;
};

// Turns a job into its message: the codec chosen (fixed, or by `auto_codec` when not null), the
// payload compressed or zeros recognised, the header and meta encoded.
void encode_job(SendJob& job, const nubo::net::SendOptions& options, AutoCodec* auto_codec);

}  // namespace nubo::transfer::net
