// What makes a C++ member fit for a C result field (generated/results.hpp assigns each field
// from the C++ member of the same name, or the expression its comment names): the same kind of
// number, no narrower, of the same signedness; a bool as a C int flag; an enum as a C enum;
// per-codec counts as the codec-indexed array; text as `const char*`. Anything else fails to
// compile, naming the field.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "nubo.h"
#include "nubo/cost.hpp"
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

// Text a C struct hands out that no C++ value holds (a label made on demand, a list joined in
// lines) is kept here, beside the C structs of a handle; a deque never moves what it holds.
using Texts = std::deque<std::string>;

// A C++ value's own string: borrowed, so the value must outlive the C struct.
inline void assign_text(const char*& out, const std::string& in, Texts&) {
  out = in.c_str();
}
// Made on demand: kept.
inline void assign_text(const char*& out, std::string&& in, Texts& texts) {
  out = texts.emplace_back(std::move(in)).c_str();
}
// A name from a table (not NUL-terminated as far as the type says): kept.
inline void assign_text(const char*& out, std::string_view in, Texts& texts) {
  out = texts.emplace_back(in).c_str();
}
// A list: one item per line, each ending in a newline ("" for none).
inline void assign_text(const char*& out, const std::vector<std::string>& in, Texts& texts) {
  std::string lines;
  for (const auto& item : in) lines.append(item).append("\n");
  out = texts.emplace_back(std::move(lines)).c_str();
}

// Rows a reader skipped: "where: reason" per line.
inline void assign_text(const char*& out, const std::vector<cost::SkippedRow>& in, Texts& texts) {
  std::string lines;
  for (const auto& row : in) lines.append(row.where).append(": ").append(row.reason).append("\n");
  out = texts.emplace_back(std::move(lines)).c_str();
}

// A map: "key=value" per line.
inline void assign_text(const char*& out, const std::map<std::string, std::string>& in,
                        Texts& texts) {
  std::string lines;
  for (const auto& [key, value] : in) lines.append(key).append("=").append(value).append("\n");
  out = texts.emplace_back(std::move(lines)).c_str();
}

inline void assign(uint64_t (&out)[NUBO_CODEC_SLOTS], const transfer::ChunkCounts& in) {
  copy_chunk_counts(in, out);
}

}  // namespace nubo::capi
