// Little-endian encoding of the archive's fixed-layout structures, and a bounds-checked cursor
// for decoding them. Every on-disk integer goes through here, so the byte order is decided in
// one place and no decoder can read past the end of what it was given.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "nubo/error.hpp"

namespace nubo::transfer {

using Bytes = std::span<const std::byte>;
using MutableBytes = std::span<std::byte>;

inline Bytes as_bytes(std::string_view s) {
  return {reinterpret_cast<const std::byte*>(s.data()), s.size()};
}

template <class T>
inline void put_le(std::byte* out, T value) {
  for (std::size_t i = 0; i < sizeof(T); ++i) {
    out[i] = static_cast<std::byte>((static_cast<std::uint64_t>(value) >> (8 * i)) & 0xff);
  }
}

template <class T>
inline T get_le(const std::byte* in) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < sizeof(T); ++i) {
    v |= static_cast<std::uint64_t>(std::to_integer<std::uint8_t>(in[i])) << (8 * i);
  }
  return static_cast<T>(v);
}

// Appends bytes to a buffer. (Not vector::insert: GCC 12 warns wrongly about it at -O2.)
inline void append(std::vector<std::byte>& out, Bytes b) {
  if (b.empty()) return;
  auto at = out.size();
  out.resize(at + b.size());
  std::memcpy(out.data() + at, b.data(), b.size());
}

// Appends encoded values to a growing buffer.
class ByteWriter {
 public:
  explicit ByteWriter(std::vector<std::byte>& out) : out_(out) {}
  template <class T>
  void put(T value) {
    auto at = out_.size();
    out_.resize(at + sizeof(T));
    put_le<T>(out_.data() + at, value);
  }
  void put_bytes(Bytes b) { append(out_, b); }
  void put_zeros(std::size_t n) { out_.resize(out_.size() + n); }

 private:
  std::vector<std::byte>& out_;
};

// Reads encoded values from a buffer of known size; reading past its end is a corrupt-data
// error naming `what` (the structure being decoded), never an out-of-bounds read.
class ByteReader {
 public:
  ByteReader(Bytes in, std::string what) : in_(in), what_(std::move(what)) {}
  template <class T>
  T get() {
    need(sizeof(T));
    T v = get_le<T>(in_.data() + pos_);
    pos_ += sizeof(T);
    return v;
  }
  Bytes take(std::size_t n) {
    need(n);
    Bytes b = in_.subspan(pos_, n);
    pos_ += n;
    return b;
  }
  std::string take_string(std::size_t n) {
    Bytes b = take(n);
    return {reinterpret_cast<const char*>(b.data()), b.size()};
  }
  void skip(std::size_t n) { take(n); }
  std::size_t remaining() const { return in_.size() - pos_; }
  std::size_t position() const { return pos_; }
  const std::string& what() const { return what_; }

 private:
  void need(std::size_t n) const {
    if (n > in_.size() - pos_) {
      throw Error(Errc::corrupt, what_ + ": truncated (needs " + std::to_string(pos_ + n) +
                                     " bytes, has " + std::to_string(in_.size()) + ")");
    }
  }
  Bytes in_;
  std::size_t pos_ = 0;
  std::string what_;
};

}  // namespace nubo::transfer
