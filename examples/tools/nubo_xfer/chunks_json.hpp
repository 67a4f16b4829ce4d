// The "chunks" object of the --json summaries of pack, unpack, verify and send: the count of
// all chunks under `total_key`, then one count per way a chunk was stored.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "nubo/transfer.hpp"

namespace nubo_xfer {

inline nlohmann::json chunks_json(const char* total_key, std::uint64_t total,
                                  const nubo::transfer::ChunkCounts& by_codec) {
  using nubo::transfer::Codec;
  nlohmann::json j = {{total_key, total}};
  for (auto c : {Codec::none, Codec::lz4, Codec::zstd, Codec::zero})
    j[std::string(nubo::transfer::codec_name(c))] = by_codec[c];
  return j;
}

}  // namespace nubo_xfer
