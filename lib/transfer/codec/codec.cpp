#include "transfer/codec/codec.hpp"

#include <lz4.h>
#include <lz4hc.h>
#include <zstd.h>
#include <zstd_errors.h>

#include <algorithm>
#include <cstring>
#include <limits>

#include "nubo/error.hpp"
#include "transfer/codec/codec_table.hpp"
#include "transfer/codec/float_planes.hpp"

namespace nubo::transfer {

namespace {

// A frame may not ask for a larger window than a chunk: bounds memory on hostile input (zstd's
// own limit is 128 MiB).
constexpr int kMaxWindowLog = 27;
// A frame decoded as a stream keeps its window: 8 MiB at most. nubo writes its index at level 3,
// whose window is 2 MiB whatever the size.
constexpr int kMaxStreamWindowLog = 23;
// The float codec picks its element width from the chunk's first 64 KiB (a tensor's values are
// alike throughout).
constexpr std::size_t kPlaneSample = 64 << 10;

[[noreturn]] void zstd_corrupt(std::size_t code) {
  throw Error(Errc::corrupt, std::string("zstd: ") + ZSTD_getErrorName(code));
}

}  // namespace

std::string_view chunk_codec_name(ChunkCodec c) {
  const CodecRow* row = find_stored_codec(c);
  return row ? row->name : "unknown";
}

bool valid_chunk_codec(std::uint8_t value) {
  return find_stored_codec(static_cast<ChunkCodec>(value)) != nullptr;
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
  std::vector<std::byte> planes;  // the float codec's transposed chunk
  ~Contexts() { ZSTD_freeCCtx(zstd); }

  // A zstd frame of `raw` into `out` (at most `cap` bytes); 0 when it does not fit.
  std::size_t zstd_frame(Bytes raw, std::byte* out, std::size_t cap, int level) {
    if (!zstd && !(zstd = ZSTD_createCCtx())) throw std::bad_alloc();
    // Only a payload smaller than the raw chunk is kept, so the output may stop there: zstd
    // then reports "destination too small", which here just means "does not pay".
    auto n = ZSTD_compressCCtx(zstd, out, cap, raw.data(), raw.size(), level);
    if (ZSTD_isError(n)) {
      if (ZSTD_getErrorCode(n) == ZSTD_error_dstSize_tooSmall) return 0;
      throw Error(Errc::internal, std::string("zstd: ") + ZSTD_getErrorName(n));
    }
    return n;
  }
};

Compressor::Compressor() : ctx_(std::make_unique<Contexts>()) {}
Compressor::~Compressor() = default;

std::size_t Compressor::compress(CodecSetting setting, Bytes raw, std::vector<std::byte>& out) {
  if (raw.empty() || raw.size() > static_cast<std::size_t>(LZ4_MAX_INPUT_SIZE)) return 0;
  switch (setting.codec) {
    case ChunkCodec::zstd: {
      out.resize(std::max(out.size(), raw.size()));
      auto n = ctx_->zstd_frame(raw, out.data(), raw.size(), setting.level);
      return n > 0 && pays(raw.size(), n) ? n : 0;
    }
    case ChunkCodec::floats: {
      // One byte for the element width, then a zstd frame of the chunk's byte planes.
      if (raw.size() < 2) return 0;
      const int stride = plane_stats(raw.first(std::min(raw.size(), kPlaneSample))).stride;
      ctx_->planes.resize(raw.size());
      split_planes(raw, stride, ctx_->planes.data());
      out.resize(std::max(out.size(), raw.size()));
      out[0] = static_cast<std::byte>(stride);
      auto n = ctx_->zstd_frame(ctx_->planes, out.data() + 1, raw.size() - 1, setting.level);
      return n > 0 && pays(raw.size(), n + 1) ? n + 1 : 0;
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
  std::vector<std::byte> planes;  // the float codec's transposed chunk
  ~Contexts() { ZSTD_freeDCtx(zstd); }

  // A zstd frame that must declare and decode to exactly out.size() bytes.
  void zstd_frame(Bytes stored, MutableBytes out) {
    if (!zstd) {
      if (!(zstd = ZSTD_createDCtx())) throw std::bad_alloc();
      ZSTD_DCtx_setParameter(zstd, ZSTD_d_windowLogMax, kMaxWindowLog);
    }
    // The frame must declare exactly the expected size (pack always writes it).
    auto declared = ZSTD_getFrameContentSize(stored.data(), stored.size());
    if (declared != out.size()) {
      throw Error(Errc::corrupt,
                  "zstd frame does not declare " + std::to_string(out.size()) + " bytes");
    }
    auto n = ZSTD_decompressDCtx(zstd, out.data(), out.size(), stored.data(), stored.size());
    if (ZSTD_isError(n)) zstd_corrupt(n);
    if (n != out.size()) {
      throw Error(Errc::corrupt, "zstd frame decodes to " + std::to_string(n) + " bytes, not " +
                                     std::to_string(out.size()));
    }
  }
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
    case ChunkCodec::zstd:
      ctx_->zstd_frame(stored, out);
      return;
    case ChunkCodec::floats: {
      if (stored.empty() || (stored[0] != std::byte{2} && stored[0] != std::byte{4}))
        throw Error(Errc::corrupt, "float chunk of an element width other than 2 or 4 bytes");
      ctx_->planes.resize(out.size());
      ctx_->zstd_frame(stored.subspan(1), ctx_->planes);
      join_planes(ctx_->planes, static_cast<int>(stored[0]), out.data());
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

struct ZstdFrameStream::State {
  ZSTD_DCtx* ctx = nullptr;
  ZSTD_inBuffer in{};
  std::uint64_t size = 0;
  std::uint64_t produced = 0;
  bool ended = false;  // the frame's last block was decoded
  ~State() { ZSTD_freeDCtx(ctx); }
};

ZstdFrameStream::ZstdFrameStream(Bytes frame, std::uint64_t size)
    : state_(std::make_unique<State>()) {
  if (ZSTD_getFrameContentSize(frame.data(), frame.size()) != size) {
    throw Error(Errc::corrupt, "zstd frame does not declare " + std::to_string(size) + " bytes");
  }
  if (!(state_->ctx = ZSTD_createDCtx())) throw std::bad_alloc();
  ZSTD_DCtx_setParameter(state_->ctx, ZSTD_d_windowLogMax, kMaxStreamWindowLog);
  state_->in = {frame.data(), frame.size(), 0};
  state_->size = size;
}

ZstdFrameStream::~ZstdFrameStream() = default;

std::size_t ZstdFrameStream::read_some(std::vector<std::byte>& out, std::size_t max) {
  auto& s = *state_;
  const auto at = out.size();
  // One byte more than is left: a frame that goes on past its declared size is caught here.
  const auto room = static_cast<std::size_t>(std::min<std::uint64_t>(max, s.size - s.produced)) + 1;
  out.resize(at + room);
  ZSTD_outBuffer o{out.data() + at, room, 0};
  while (o.pos < o.size && !s.ended) {
    const auto before = s.in.pos;
    auto hint = ZSTD_decompressStream(s.ctx, &o, &s.in);
    if (ZSTD_isError(hint)) zstd_corrupt(hint);
    s.ended = hint == 0;
    if (!s.ended && o.pos == 0 && s.in.pos == before) {
      throw Error(Errc::corrupt, "zstd frame is truncated");
    }
    if (o.pos > 0) break;  // a piece is enough: the reader asks again
  }
  out.resize(at + o.pos);
  s.produced += o.pos;
  if (s.produced > s.size) {
    throw Error(Errc::corrupt, "zstd frame decodes to more than its " + std::to_string(s.size) +
                                   " declared bytes");
  }
  return o.pos;
}

void ZstdFrameStream::finish() {
  auto& s = *state_;
  std::vector<std::byte> extra;
  if (!s.ended && read_some(extra, 1) == 0 && !s.ended) {
    throw Error(Errc::corrupt, "zstd frame is truncated");
  }
  if (!s.ended || s.produced != s.size) {
    throw Error(Errc::corrupt,
                "zstd frame does not end after its " + std::to_string(s.size) + " declared bytes");
  }
  if (s.in.pos != s.in.size) throw Error(Errc::corrupt, "bytes after the zstd frame");
}

}  // namespace nubo::transfer
