// Where a transfer's chunks go: the seam between the one source (chunk_source.hpp) and each
// destination. A destination is a Sink: the archive writer (pack.cpp), a receiver over the
// network (net/send.cpp); the next one is a folder and a class, not a copy of the pipeline.
//
// run_transfer drives any sink: it asks the sink what the destination already holds, reads what
// is missing with a ChunkSource, encodes it on every core, and hands each job to the sink in
// order. Resume, verification and durability belong to the sink and its destination.
#pragma once

#include <cstdint>
#include <vector>

#include "transfer/pipeline/chunk_source.hpp"
#include "transfer/pipeline/options.hpp"
#include "transfer/pipeline/walk.hpp"

namespace nubo::transfer {

class Sink {
 public:
  virtual ~Sink() = default;
  // What the source must still read of `walk` (entries left out are complete at the
  // destination), and how the source should cut it for this destination.
  virtual std::vector<FilePlan> plan(const WalkResult& walk) = 0;
  virtual SourceOptions source_options() const = 0;
  // Each job, encoded, in the source's order, on one thread. Throws to stop the transfer
  // (Error(cancelled) when the user cancelled).
  virtual void put(SourceJob& job) = 0;
  // After the last job: everything durable and in its final place.
  virtual void finish() = 0;
  // The transfer stopped early (a failure, or a cancel): keep what is verified, so that the
  // same transfer run again resumes.
  virtual void abort(bool cancelled) noexcept = 0;
};

struct Encoding {
  Codec codec = Codec::zstd;
  int level = 0;
  AutoCodec* auto_codec = nullptr;  // per-chunk choice; null: codec and level
  AutoCodec* read_meter = nullptr;  // told how fast the source reads (pack's auto)
  Resources resources;
};

void run_transfer(const WalkResult& walk, Sink& sink, std::uint32_t chunk_size,
                  const Encoding& encoding);

}  // namespace nubo::transfer
