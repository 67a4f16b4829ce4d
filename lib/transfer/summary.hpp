// Counting what a transfer did into its Summary, the same way for every operation.
#pragma once

#include "nubo/transfer.hpp"
#include "transfer/codec.hpp"
#include "transfer/format.hpp"

namespace nubo::transfer {

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
  switch (codec) {
    case ChunkCodec::none:
      ++s.chunks_none;
      break;
    case ChunkCodec::lz4:
      ++s.chunks_lz4;
      break;
    case ChunkCodec::zstd:
      ++s.chunks_zstd;
      break;
    case ChunkCodec::zero:
      ++s.chunks_zero;
      break;
  }
}

}  // namespace nubo::transfer
