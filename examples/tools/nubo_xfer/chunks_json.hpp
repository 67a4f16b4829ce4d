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
  // Every way a chunk can be stored: each codec the library names, but auto, which chooses.
  for (std::size_t slot = 0; slot < by_codec.slots.size(); ++slot) {
    const auto c = static_cast<Codec>(slot);
    const auto name = nubo::transfer::codec_name(c);
    if (c != Codec::automatic && name != "unknown") j[std::string(name)] = by_codec[c];
  }
  return j;
}

}  // namespace nubo_xfer
