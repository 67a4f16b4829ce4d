// Little-endian encoding of the archive's fixed-layout structures, and a bounds-checked cursor
// for decoding them. Every on-disk integer goes through here, so the byte order is decided in
// one place and no decoder can read past the end of what it was given.
#pragma once

#include <algorithm>
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

// The bytes of a stream decoded a piece at a time (the archive's compressed index), for a
// ByteReader: what one allocation of its declared size would not be trusted with.
class ByteStream {
 public:
  virtual ~ByteStream() = default;
  // Appends up to `max` (> 0) more bytes to `out` and returns how many: 0 once it has ended.
  virtual std::size_t read_some(std::vector<std::byte>& out, std::size_t max) = 0;
};

// Reads encoded values from a buffer of known size, or from a stream of a declared size; reading
// past its end is a corrupt-data error naming `what` (the structure being decoded), never an
// out-of-bounds read. A stream is decoded as the reader goes: what it holds at once is what the
// last value needed, never the declared size, so a reader that refuses a value stops a hostile
// stream before it has been decoded.
class ByteReader {
 public:
  ByteReader(Bytes in, std::string what) : in_(in), size_(in.size()), what_(std::move(what)) {}
  ByteReader(ByteStream& stream, std::uint64_t size, std::string what)
      : size_(size), stream_(&stream), what_(std::move(what)) {}
  template <class T>
  T get() {
    need(sizeof(T));
    T v = get_le<T>(in_.data() + pos_);
    pos_ += sizeof(T);
    return v;
  }
  // A view valid until the next read.
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
  // Of the declared size, for a stream.
  std::uint64_t remaining() const { return size_ - position(); }
  std::uint64_t position() const { return consumed_ + pos_; }
  const std::string& what() const { return what_; }

 private:
  void need(std::size_t n) {
    if (n > size_ - position()) {
      throw Error(Errc::corrupt, what_ + ": truncated (needs " + std::to_string(position() + n) +
                                     " bytes, has " + std::to_string(size_) + ")");
    }
    if (n > in_.size() - pos_) refill(n);
  }
  // Keeps the unread bytes and reads the stream until `n` of them are there.
  void refill(std::size_t n) {
    consumed_ += pos_;
    buffer_.erase(buffer_.begin(), buffer_.begin() + static_cast<std::ptrdiff_t>(pos_));
    pos_ = 0;
    while (buffer_.size() < n) {
      const auto want = std::max<std::uint64_t>(n - buffer_.size(), kStep);
      const auto got = stream_->read_some(
          buffer_, static_cast<std::size_t>(std::min<std::uint64_t>(want, remaining())));
      if (got == 0) {
        throw Error(Errc::corrupt, what_ + ": ends after " +
                                       std::to_string(consumed_ + buffer_.size()) +
                                       " bytes, not the " + std::to_string(size_) + " declared");
      }
    }
    in_ = buffer_;
  }
  static constexpr std::uint64_t kStep = 64 << 10;

  Bytes in_;
  std::size_t pos_ = 0;
  std::uint64_t size_;
  ByteStream* stream_ = nullptr;  // null: `in_` is all there is
  std::vector<std::byte> buffer_;
  std::uint64_t consumed_ = 0;  // stream bytes before buffer_
  std::string what_;
};

}  // namespace nubo::transfer
