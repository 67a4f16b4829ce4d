// How a chunk is stored, for every destination (an archive, the wire): a hole or all-zero chunk
// as `zero` with no payload, otherwise compressed with the codec chosen (fixed, or per chunk by
// AutoCodec), or raw when compression does not pay. One implementation, so that a chunk is
// encoded the same way whichever sink takes it.
#pragma once

#include <cstdint>
#include <vector>

#include "nubo/transfer.hpp"
#include "transfer/bytes.hpp"
#include "transfer/format/format.hpp"
#include "transfer/pipeline/auto_codec.hpp"

namespace nubo::transfer {

struct EncodedChunk {
  ChunkCodec codec = ChunkCodec::none;  // none: the raw bytes are the payload
  int level = 0;
  std::uint64_t raw_hash = 0;   // XXH3-64 of the raw bytes
  std::size_t stored_size = 0;  // bytes of `out` holding the payload (0 for none and zero)
};

// `raw` is the chunk's bytes, or empty with `hole` (size `raw_size` of zeros never read).
// `auto_codec` null: the fixed `codec`/`level`. Compressed bytes go to `out`, grown as needed.
// Thread-safe: each thread keeps its own codec contexts.
EncodedChunk encode_chunk(Bytes raw, bool hole, std::uint32_t raw_size, Codec codec, int level,
                          AutoCodec* auto_codec, std::vector<std::byte>& out);

}  // namespace nubo::transfer
