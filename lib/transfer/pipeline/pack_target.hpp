// Where a pack's archive goes, and how an interrupted pack is taken up again. The archive sink
// (pack.cpp) turns the pipeline's jobs into records and says when it stands between two jobs;
// a target decides where the bytes go and what a checkpoint keeps:
//  - a local file: "<archive>.part" with its journal, renamed into place at the end (pack.cpp);
//  - a stream (stdout): nothing to resume (pack.cpp);
//  - an object: a multipart upload whose parts go up from memory (pack_object.hpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "nubo/transfer.hpp"
#include "transfer/archive/archive_writer.hpp"
#include "transfer/pipeline/pack_resume.hpp"
#include "transfer/pipeline/walk.hpp"

namespace nubo::transfer {

class PackTarget {
 public:
  virtual ~PackTarget() = default;

  struct Start {
    ArchiveWriter writer;
    // What an interrupted attempt left, when continued (resume.fresh: nothing). Its index has
    // gone into the writer.
    PackResume resume;
  };
  // The writer to pack `walk` with; `keys`: what to encrypt with (nothing: not encrypted).
  virtual Start start(const WalkResult& walk, std::uint32_t chunk_size, const KeySource& keys) = 0;
  // Whether a checkpoint is due, the writer being at `offset` with `content_bytes` of the
  // sources packed since the last one.
  virtual bool due(std::uint64_t offset, std::uint64_t content_bytes) const = 0;
  // Between two jobs, every record given to the writer and flushed: `c` says where the pack
  // stands, for a rerun to continue after it.
  virtual void checkpoint(ArchiveWriter& writer, const PackCheckpoint& c) = 0;
  // The writer has finished the archive: it takes its name. Adds what it moved to `summary`.
  virtual void finish(ArchiveWriter& writer, Summary& summary) = 0;
  // The pack failed, or was cancelled (then after a last checkpoint, when it could take one).
  virtual void abort(bool /*cancelled*/) noexcept {}
  // The archive is already what this pack would make (skip_unchanged): clears what an earlier
  // attempt left when it was killed once the archive was whole (its journal, a partial file, an
  // upload it began and never completed).
  virtual void forget_earlier() {}
};

// The summary of a pack that has nothing to do: the archive at `archive` is already what
// packing `sources` with `options` makes now (up_to_date set); nullopt when it is not, or is
// not there, or cannot be read as a whole archive.
std::optional<Summary> unchanged(const std::string& archive,
                                 const std::vector<std::string>& sources,
                                 const PackOptions& options);

// The files a pack into the local file `archive` writes ("<archive>.part", its journal, the
// archive itself): the walk leaves them out when the archive lies inside a source.
std::vector<std::string> companions_of(const std::string& archive);

// A fresh data key for a new archive, when `keys` encrypt.
std::optional<Encryption> fresh_encryption(const KeySource& keys);

// A pack's identity, which its journal carries: the same sources and filters with the same
// chunk size. The codec may differ between attempts: each chunk records its own.
std::string pack_identity(const std::vector<std::string>& sources, const PackOptions& options);

}  // namespace nubo::transfer
