// What makes a C++ member fit for a C result field (generated/results.hpp assigns each field
// from the C++ member of the same name): the same kind of number, no narrower, of the same
// signedness; a bool as a C int flag; an enum as a C enum; per-codec counts as the codec-indexed
// array. Anything else fails to compile, naming the field.
#pragma once

#include <cstdint>
#include <type_traits>

#include "nubo.h"
#include "nubo/transfer.hpp"
#include "transfer_convert.hpp"

namespace nubo::capi {

template <class C, class Cpp>
void assign(C& out, const Cpp& in) {
  if constexpr (std::is_same_v<Cpp, bool>) {
    static_assert(std::is_same_v<C, int>, "a C++ bool goes into a C int flag");
    out = in ? 1 : 0;
  } else if constexpr (std::is_enum_v<Cpp>) {
    static_assert(std::is_enum_v<C>, "a C++ enum goes into a C enum");
    out = static_cast<C>(in);
  } else if constexpr (std::is_floating_point_v<Cpp>) {
    static_assert(std::is_floating_point_v<C> && sizeof(C) >= sizeof(Cpp),
                  "a C++ floating-point member goes into a C field at least as wide");
    out = in;
  } else {
    static_assert(std::is_integral_v<Cpp> && std::is_integral_v<C> &&
                      std::is_signed_v<C> == std::is_signed_v<Cpp> && sizeof(C) >= sizeof(Cpp),
                  "a C++ integer goes into a C integer of its signedness, at least as wide");
    out = in;
  }
}

inline void assign(uint64_t (&out)[NUBO_CODEC_SLOTS], const transfer::ChunkCounts& in) {
  copy_chunk_counts(in, out);
}

}  // namespace nubo::capi
