// The struct_size protocol of options and info structs (docs/abi.md): a struct begins with
// `uint32_t struct_size`, the caller's sizeof, and nubo touches only the bytes it covers. A caller
// built against an older, shorter struct therefore never has memory written past its end, and a
// library reading an older options struct fills the fields it lacks with defaults.
//
// A size that does not even cover struct_size is never what a caller meant (0 is the usual
// "forgot to set it"), so each helper rejects it with a message that says how to fix it.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

#include "nubo/error.hpp"

namespace nubo::capi {

constexpr std::size_t kMinStructSize = sizeof(std::uint32_t);

template <class T>
constexpr void check_layout() {
  static_assert(std::is_trivially_copyable_v<T> && std::is_standard_layout_v<T>);
  static_assert(offsetof(T, struct_size) == 0 && sizeof(T::struct_size) == kMinStructSize,
                "a C ABI struct begins with uint32_t struct_size");
}

// An *_init function: writes the defaults into the caller's struct of `size` bytes. Bytes beyond
// what this library knows (a caller built against a newer header) are zeroed rather than left as
// garbage; struct_size records the caller's size.
template <class T>
void init_sized(T defaults, T* out, std::size_t size, const char* type_name) {
  check_layout<T>();
  if (size < kMinStructSize || size > UINT32_MAX) {
    throw Error(Errc::invalid_argument,
                "struct_size is " + std::to_string(size) + ": pass sizeof(" + type_name + ")");
  }
  std::memset(static_cast<void*>(out), 0, size);
  defaults.struct_size = static_cast<std::uint32_t>(size);
  std::memcpy(static_cast<void*>(out), &defaults, std::min(size, sizeof(T)));
}

// Reads a caller's struct: the fields its struct_size covers come from the caller, the rest keep
// the defaults. Fields a newer caller has beyond T are ignored: this library cannot honour them.
template <class T>
T read_sized(const T& in, T defaults, const char* name, const char* init_function) {
  check_layout<T>();
  if (in.struct_size < kMinStructSize) {
    throw Error(Errc::invalid_argument, std::string(name) + "->struct_size is " +
                                            std::to_string(in.struct_size) + ": fill " + name +
                                            " with " + init_function + " first");
  }
  std::memcpy(static_cast<void*>(&defaults), &in, std::min<std::size_t>(in.struct_size, sizeof(T)));
  defaults.struct_size = sizeof(T);
  return defaults;
}

// An out struct the caller passed (NULL: none is wanted) is checked before any work, not after
// the work has been done.
template <class T>
void check_out_size(const T* out, const char* name, const char* type_name) {
  check_layout<T>();
  if (out != nullptr && out->struct_size < kMinStructSize) {
    throw Error(Errc::invalid_argument, std::string(name) + "->struct_size is " +
                                            std::to_string(out->struct_size) +
                                            ": set it to sizeof(" + type_name + ") first");
  }
}

// Writes a filled-in struct into the caller's, only as far as the caller's struct_size reaches;
// struct_size itself keeps the caller's value.
template <class T>
void write_sized(T full, T* out, const char* name, const char* type_name) {
  check_out_size(out, name, type_name);
  full.struct_size = out->struct_size;
  std::memcpy(static_cast<void*>(out), &full, std::min<std::size_t>(out->struct_size, sizeof(T)));
}

}  // namespace nubo::capi
