#include "transfer/pipeline/chunk_encoder.hpp"

#include <chrono>
#include <cstring>

#include "transfer/hash.hpp"
#include "transfer/pipeline/options.hpp"

namespace nubo::transfer {
namespace {

bool all_zero(Bytes b) {
  return b.empty() ||
         (b[0] == std::byte{0} && std::memcmp(b.data(), b.data() + 1, b.size() - 1) == 0);
}

}  // namespace

EncodedChunk encode_chunk(Bytes raw, bool hole, std::uint32_t raw_size, Codec codec, int level,
                          AutoCodec* auto_codec, std::vector<std::byte>& out) {
  thread_local Compressor compressor;
  thread_local std::vector<std::byte> zeros;
  EncodedChunk e;
  if (hole || all_zero(raw)) {
    if (zeros.size() < raw_size) zeros.resize(raw_size);
    e.codec = ChunkCodec::zero;
    e.raw_hash = hash64({zeros.data(), raw_size});
    return e;
  }
  e.raw_hash = hash64(raw);
  AutoCodec::Choice choice;
  if (auto_codec) {
    choice = auto_codec->choose(raw, compressor);
  } else {
    choice.setting = fixed_setting(codec, level);
  }
  if (choice.setting.codec == ChunkCodec::none) return e;
  const auto t0 = std::chrono::steady_clock::now();
  e.stored_size = compressor.compress(choice.setting, raw, out);
  if (auto_codec)
    auto_codec->observe(
        choice, raw.size(), e.stored_size,
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  if (e.stored_size > 0) {
    e.codec = choice.setting.codec;
    e.level = choice.setting.level;
  }
  return e;
}

}  // namespace nubo::transfer
