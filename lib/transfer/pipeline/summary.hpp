// Counting what a transfer did into its Summary, the same way for every operation.
#pragma once

#include "nubo/transfer.hpp"
#include "transfer/codec/codec.hpp"
#include "transfer/codec/codec_table.hpp"
#include "transfer/format/format.hpp"

namespace nubo::transfer {

// The public Codec a chunk was stored with: the index of summaries' chunks_by_codec.
inline Codec public_codec(ChunkCodec c) {
  return find_stored_codec(c)->id;  // every stored byte was checked against the table on read
}
// Counts a chunk stored with c.
inline void count_stored(ChunkCounts& counts, ChunkCodec c) {
  ++counts[public_codec(c)];
}

inline void count_entry(Summary& s, format::EntryKind kind) {
  switch (kind) {
    case format::EntryKind::file:
      ++s.files;
      break;
    case format::EntryKind::directory:
      ++s.directories;
      break;
    case format::EntryKind::symlink:
      ++s.symlinks;
      break;
  }
}

inline void count_chunk(Summary& s, ChunkCodec codec) {
  ++s.chunks;
  count_stored(s.chunks_by_codec, codec);
}

}  // namespace nubo::transfer
