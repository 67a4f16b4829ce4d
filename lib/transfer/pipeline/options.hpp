// Checking the caller's options and turning them into what the pipeline needs. A bad value is
// an Error(invalid_argument) that names the option and what it accepts.
#pragma once

#include <cstddef>
#include <cstdint>

#include "nubo/transfer.hpp"
#include "transfer/codec/codec.hpp"

namespace nubo::transfer {

struct Resources {
  std::size_t workers = 1;  // transform threads
  std::size_t slots = 2;    // jobs in flight, each with a raw and a stored buffer
};

// `chunk_size` is the largest chunk the job handles; each slot holds two buffers of that size.
Resources plan_resources(int threads, std::uint64_t memory_limit, std::uint64_t chunk_size);

void check_chunk_size(std::uint64_t chunk_size);

// The setting for a fixed codec and level (level 0: the codec's default).
CodecSetting fixed_setting(Codec codec, int level);

// The highest zstd level `automatic` may use for `level` (0: 12).
int auto_max_level(int level);

}  // namespace nubo::transfer
