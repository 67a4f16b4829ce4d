// libFuzzer target for the protocol decoder: the input is a byte stream as a peer would send it,
// decoded message by message exactly as the server does (frame header first, checked against the
// limit for the stream's state, then the payload by type). Any input must end in a clean
// Error, never a crash, a hang or an unbounded allocation.
#include <cstddef>
#include <cstdint>

#include "nubo/error.hpp"
#include "transfer/net/wire.hpp"

namespace tn = nubo::transfer::net;
using nubo::transfer::Bytes;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Bytes in{reinterpret_cast<const std::byte*>(data), size};
  std::uint32_t chunk_size = 64 << 10;
  bool authenticated = false;
  try {
    while (in.size() >= tn::kFrameHeaderSize) {
      auto h =
          tn::decode_frame_header(in.first(tn::kFrameHeaderSize),
                                  authenticated ? tn::kMaxControl + chunk_size : tn::kMaxHandshake);
      if (h.length > tn::max_payload(h.type, chunk_size)) return 0;
      in = in.subspan(tn::kFrameHeaderSize);
      if (h.length > in.size()) return 0;  // the rest would be awaited: nothing allocated yet
      auto p = in.first(h.length);
      in = in.subspan(h.length);
      switch (h.type) {
        case tn::MsgType::hello:
          tn::decode_hello(p);
          break;
        case tn::MsgType::challenge:
          tn::decode_challenge(p);
          break;
        case tn::MsgType::auth:
          tn::decode_mac(p, "auth");
          authenticated = true;
          break;
        case tn::MsgType::welcome:
          tn::decode_welcome(p);
          break;
        case tn::MsgType::error:
          tn::decode_error(p);
          break;
        case tn::MsgType::begin:
          chunk_size = tn::decode_begin(p).chunk_size;
          break;
        case tn::MsgType::entries:
          tn::decode_entries(p);
          break;
        case tn::MsgType::status:
          tn::decode_status(p, 1000);
          break;
        case tn::MsgType::chunk:
          if (p.size() < tn::kChunkMetaSize) return 0;
          tn::decode_chunk_meta(p.first(tn::kChunkMetaSize), chunk_size);
          break;
        case tn::MsgType::bundle: {
          tn::BundleMeta b;
          tn::decode_bundle(p, chunk_size, b);
          break;
        }
        case tn::MsgType::file_end:
          tn::decode_file_end(p);
          break;
        case tn::MsgType::stream_end:
        case tn::MsgType::stream_done:
          tn::decode_u64(p, "u64");
          break;
        case tn::MsgType::result:
          tn::decode_result(p);
          break;
        default:
          break;
      }
    }
  } catch (const nubo::Error&) {
  }
  return 0;
}
