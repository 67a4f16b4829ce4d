#include "transfer/codec.hpp"

#include <lz4.h>
#include <lz4hc.h>
#include <zstd.h>
#include <zstd_errors.h>

#include <algorithm>
#include <cstring>
#include <limits>

#include "nubo/error.hpp"

namespace nubo::transfer {

std::string_view chunk_codec_name(ChunkCodec c) {
  switch (c) {
    case ChunkCodec::none:
      return "none";
    case ChunkCodec::lz4:
      return "lz4";
    case ChunkCodec::zstd:
      return "zstd";
    case ChunkCodec::zero:
      return "zero";
  }
  return "unknown";
}

bool valid_chunk_codec(std::uint8_t value) {
  return value < kChunkCodecCount;
}

std::string setting_name(CodecSetting s) {
  std::string name(chunk_codec_name(s.codec));
  if (s.codec == ChunkCodec::zstd || (s.codec == ChunkCodec::lz4 && s.level > 1)) {
    name += '-';
    name += std::to_string(s.level);
  }
  return name;
}

struct Compressor::Contexts {
  ZSTD_CCtx* zstd = nullptr;
  std::vector<char> lz4_state;
  std::vector<char> lz4hc_state;
  ~Contexts() { ZSTD_freeCCtx(zstd); }
};

Compressor::Compressor() : ctx_(std::make_unique<Contexts>()) {}
Compressor::~Compressor() = default;

std::size_t Compressor::compress(CodecSetting setting, Bytes raw, std::vector<std::byte>& out) {
  if (raw.empty() || raw.size() > static_cast<std::size_t>(LZ4_MAX_INPUT_SIZE)) return 0;
  switch (setting.codec) {
    case ChunkCodec::zstd: {
      if (!ctx_->zstd && !(ctx_->zstd = ZSTD_createCCtx())) throw std::bad_alloc();
      // Only a payload smaller than the raw chunk is kept, so the output may stop there: zstd
      // then reports "destination too small", which here just means "does not pay".
      out.resize(std::max(out.size(), raw.size()));
      auto n = ZSTD_compressCCtx(ctx_->zstd, out.data(), raw.size(), raw.data(), raw.size(),
                                 setting.level);
      if (ZSTD_isError(n)) {
        if (ZSTD_getErrorCode(n) == ZSTD_error_dstSize_tooSmall) return 0;
        throw Error(Errc::internal, std::string("zstd: ") + ZSTD_getErrorName(n));
      }
      return pays(raw.size(), n) ? n : 0;
    }
    case ChunkCodec::lz4: {
      out.resize(std::max(out.size(), raw.size()));
      auto src = reinterpret_cast<const char*>(raw.data());
      auto dst = reinterpret_cast<char*>(out.data());
      auto cap = static_cast<int>(raw.size());
      int n = 0;
      if (setting.level <= 1) {
        if (ctx_->lz4_state.empty()) ctx_->lz4_state.resize(LZ4_sizeofState());
        n = LZ4_compress_fast_extState(ctx_->lz4_state.data(), src, dst, cap, cap, 1);
      } else {
        if (ctx_->lz4hc_state.empty()) ctx_->lz4hc_state.resize(LZ4_sizeofStateHC());
        n = LZ4_compress_HC_extStateHC(ctx_->lz4hc_state.data(), src, dst, cap, cap,
                                       std::min(setting.level, LZ4HC_CLEVEL_MAX));
      }
      auto size = static_cast<std::size_t>(std::max(n, 0));  // 0: did not fit
      return pays(raw.size(), size) ? size : 0;
    }
    case ChunkCodec::none:
    case ChunkCodec::zero:
      return 0;
  }
  return 0;
}

struct Decompressor::Contexts {
  ZSTD_DCtx* zstd = nullptr;
  ~Contexts() { ZSTD_freeDCtx(zstd); }
};

Decompressor::Decompressor() : ctx_(std::make_unique<Contexts>()) {}
Decompressor::~Decompressor() = default;

void Decompressor::decompress(ChunkCodec codec, Bytes stored, MutableBytes out) {
  switch (codec) {
    case ChunkCodec::none:
      if (stored.size() != out.size()) {
        throw Error(Errc::corrupt, "raw payload of " + std::to_string(stored.size()) +
                                       " bytes for " + std::to_string(out.size()) + " raw bytes");
      }
      std::memcpy(out.data(), stored.data(), out.size());
      return;
    case ChunkCodec::zero:
      if (!stored.empty()) throw Error(Errc::corrupt, "a zero chunk with a payload");
      std::memset(out.data(), 0, out.size());
      return;
    case ChunkCodec::zstd: {
      if (!ctx_->zstd) {
        if (!(ctx_->zstd = ZSTD_createDCtx())) throw std::bad_alloc();
        // A frame may not ask for a larger window than the chunk itself: bounds memory on
        // hostile input (zstd's own limit is 128 MiB).
        ZSTD_DCtx_setParameter(ctx_->zstd, ZSTD_d_windowLogMax, 27);
      }
      // The frame must declare exactly the expected size (pack always writes it).
      auto declared = ZSTD_getFrameContentSize(stored.data(), stored.size());
      if (declared != out.size()) {
        throw Error(Errc::corrupt,
                    "zstd frame does not declare " + std::to_string(out.size()) + " bytes");
      }
      auto n =
          ZSTD_decompressDCtx(ctx_->zstd, out.data(), out.size(), stored.data(), stored.size());
      if (ZSTD_isError(n)) throw Error(Errc::corrupt, std::string("zstd: ") + ZSTD_getErrorName(n));
      if (n != out.size()) {
        throw Error(Errc::corrupt, "zstd frame decodes to " + std::to_string(n) + " bytes, not " +
                                       std::to_string(out.size()));
      }
      return;
    }
    case ChunkCodec::lz4: {
      if (stored.size() > static_cast<std::size_t>(std::numeric_limits<int>::max()) ||
          out.size() > static_cast<std::size_t>(std::numeric_limits<int>::max())) {
        throw Error(Errc::corrupt, "lz4 block too large");
      }
      int n = LZ4_decompress_safe(reinterpret_cast<const char*>(stored.data()),
                                  reinterpret_cast<char*>(out.data()),
                                  static_cast<int>(stored.size()), static_cast<int>(out.size()));
      if (n < 0) throw Error(Errc::corrupt, "lz4 block is malformed");
      if (static_cast<std::size_t>(n) != out.size()) {
        throw Error(Errc::corrupt, "lz4 block decodes to " + std::to_string(n) + " bytes, not " +
                                       std::to_string(out.size()));
      }
      return;
    }
  }
  throw Error(Errc::corrupt, "unknown codec " + std::to_string(static_cast<int>(codec)));
}

}  // namespace nubo::transfer
