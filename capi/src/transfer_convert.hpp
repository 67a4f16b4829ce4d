// Conversions shared by the archive and the network entry points of the C ABI.
#pragma once

#include <functional>
#include <string>
#include <tuple>
#include <vector>

#include "nubo.h"
#include "nubo/transfer.hpp"

namespace nubo::capi {

// Throws Errc::invalid_argument naming options->codec for a value that is not a nubo_codec.
transfer::Codec to_codec(nubo_codec c);

// `count` C strings as a vector; Error(invalid_argument) naming `what` for a NULL array with a
// count, or a NULL string in it.
std::vector<std::string> to_strings(const char* const* items, size_t count, const char* what);

// The C progress callback as a ProgressFn; the current file is copied so that it is
// NUL-terminated. Empty for NULL.
transfer::ProgressFn wrap_progress(nubo_transfer_progress_callback callback, void* user);
// A sync's change callback as C++ calls it (copy.cpp).
std::function<void(const std::string&)> wrap_change(nubo_transfer_change_callback callback,
                                                    void* user);

// Per-codec chunk counts into a C summary's chunks_by_codec (the same slots, indexed by codec).
inline void copy_chunk_counts(const transfer::ChunkCounts& from, uint64_t (&to)[NUBO_CODEC_SLOTS]) {
  static_assert(std::tuple_size_v<decltype(from.slots)> == NUBO_CODEC_SLOTS);
  for (std::size_t i = 0; i < from.slots.size(); ++i) to[i] = from.slots[i];
}

}  // namespace nubo::capi
