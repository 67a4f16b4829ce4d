// Chunk codecs: each chunk is compressed on its own (zstd, lz4, or zstd over the byte planes of
// float tensors: float_planes.hpp), stored raw when compression does not pay, or recorded as all
// zeros (holes of sparse files) with no payload at all.
// Compressor and Decompressor hold a codec's reusable contexts; use one per thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "transfer/bytes.hpp"

namespace nubo::transfer {

// The values are the archive's codec byte (docs/archive-format.md): never change them.
enum class ChunkCodec : std::uint8_t { none = 0, lz4 = 1, zstd = 2, zero = 3, floats = 4 };
constexpr std::uint8_t kChunkCodecCount = 5;

std::string_view chunk_codec_name(ChunkCodec c);

bool valid_chunk_codec(std::uint8_t value);

// A codec and its level: zstd -7..22 (negative: zstd's fast modes), lz4 1 (fast) or 2..12 (HC);
// options.cpp checks them.
struct CodecSetting {
  ChunkCodec codec = ChunkCodec::none;
  int level = 0;
  bool operator==(const CodecSetting&) const = default;
};
std::string setting_name(CodecSetting s);  // "zstd-3", "lz4", "none"

// The largest payload a chunk of raw_size bytes may have in an archive. Compression that does
// not pay is stored raw, so no payload exceeds its raw size: this is what bounds every read.
inline std::size_t max_stored_size(ChunkCodec c, std::size_t raw_size) {
  return c == ChunkCodec::zero ? 0 : raw_size;
}

// Compression saves less than 1/64 of the chunk: store it raw and save the reader the work.
inline bool pays(std::size_t raw, std::size_t compressed) {
  return compressed + raw / 64 < raw;
}

class Compressor {
 public:
  Compressor();
  ~Compressor();
  Compressor(const Compressor&) = delete;
  Compressor& operator=(const Compressor&) = delete;

  // Compresses `raw` with `setting` into `out` (grown as needed). Returns the size of the
  // payload, or 0 when compression does not pay: the chunk is then stored raw.
  std::size_t compress(CodecSetting setting, Bytes raw, std::vector<std::byte>& out);

 private:
  struct Contexts;
  std::unique_ptr<Contexts> ctx_;
};

class Decompressor {
 public:
  Decompressor();
  ~Decompressor();
  Decompressor(const Decompressor&) = delete;
  Decompressor& operator=(const Decompressor&) = delete;

  // Decodes `stored` into exactly out.size() bytes. Malformed data, or data that does not
  // decode to exactly that size, throws Error(corrupt) whose message is the problem alone; the
  // caller adds which file and chunk. `out` is never written past its end.
  void decompress(ChunkCodec codec, Bytes stored, MutableBytes out);

 private:
  struct Contexts;
  std::unique_ptr<Contexts> ctx_;
};

// One zstd frame decoded a piece at a time (the archive's index): it must declare `size` bytes
// and decode to exactly those, and what it holds at once is zstd's window, never `size`. Each
// problem throws Error(corrupt) whose message is the problem alone.
class ZstdFrameStream : public ByteStream {
 public:
  ZstdFrameStream(Bytes frame, std::uint64_t size);
  ~ZstdFrameStream() override;
  ZstdFrameStream(const ZstdFrameStream&) = delete;
  ZstdFrameStream& operator=(const ZstdFrameStream&) = delete;

  std::size_t read_some(std::vector<std::byte>& out, std::size_t max) override;
  // After `size` bytes were read: throws unless the frame ends there, with no bytes after it.
  void finish();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace nubo::transfer
