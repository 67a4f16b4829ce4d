// The protocol's encoders and decoders: round trips, and every length and count checked.
#include <catch2/catch.hpp>

#include "transfer/net/socket.hpp"
#include "transfer/net/wire.hpp"

namespace tn = nubo::transfer::net;
using nubo::transfer::Bytes;

TEST_CASE("frame headers are checked before any payload is read", "[net]") {
  auto h = tn::encode_frame_header(tn::MsgType::chunk, 100);
  CHECK(tn::decode_frame_header(h, 100).length == 100);
  CHECK_THROWS_WITH(tn::decode_frame_header(h, 99), Catch::Contains("exceeds the limit"));
  h[0] = std::byte{'X'};
  CHECK_THROWS_WITH(tn::decode_frame_header(h, 100), Catch::Contains("bad magic"));
  h = tn::encode_frame_header(tn::MsgType::chunk, 1);
  h[1] = std::byte{99};
  CHECK_THROWS_WITH(tn::decode_frame_header(h, 100), Catch::Contains("unknown message type"));
  CHECK(tn::max_payload(tn::MsgType::hello, 1 << 20) == tn::kMaxHandshake);
  CHECK(tn::max_payload(tn::MsgType::chunk, 1 << 20) == tn::kChunkMetaSize + (1 << 20));
}

TEST_CASE("messages round trip and reject lies about their sizes", "[net]") {
  nubo::transfer::format::EntryMeta e;
  e.path = "a/b c";
  e.size = 12345;
  auto batches = tn::encode_entries({e, e});
  REQUIRE(batches.size() == 1);
  auto back = tn::decode_entries(batches[0]);
  REQUIRE(back.size() == 2);
  CHECK(back[1] == e);
  // A count far above what the payload holds.
  auto lie = batches[0];
  lie[3] = std::byte{0x7f};
  CHECK_THROWS_AS(tn::decode_entries(lie), nubo::Error);

  tn::FileStatus s{3, false, {{0, 2}, {5, 1}}};
  auto st = tn::encode_status({s});
  auto sb = tn::decode_status(st[0], 4);
  CHECK(sb[0].verified == s.verified);
  CHECK_THROWS_WITH(tn::decode_status(st[0], 3), Catch::Contains("out of range"));

  tn::ChunkMeta c{1, 2, nubo::transfer::ChunkCodec::lz4, 1, 4096, 77, 5000};
  auto cm = tn::encode_chunk_meta(c);
  CHECK_THROWS_WITH(tn::decode_chunk_meta(cm, 4096), Catch::Contains("stored size"));
  c.stored_size = 100;
  cm = tn::encode_chunk_meta(c);
  CHECK(tn::decode_chunk_meta(cm, 4096).raw_hash == 77);
  CHECK_THROWS_WITH(tn::decode_chunk_meta(cm, 2048), Catch::Contains("raw size"));

  CHECK_THROWS_WITH(tn::decode_begin(tn::encode_begin({4096, 1, "../x"})), Catch::Contains("'..'"));
  CHECK_THROWS_WITH(tn::decode_begin(tn::encode_begin({1, 1, ""})), Catch::Contains("chunk size"));
}

TEST_CASE("endpoints parse with ports, IPv6 and subdirectories", "[net]") {
  auto e = tn::parse_endpoint("127.0.0.1:80/a/b/", true);
  CHECK(e.host == "127.0.0.1");
  CHECK(e.port == 80);
  CHECK(e.subdir == "a/b");
  e = tn::parse_endpoint("[::1]:9000", true);
  CHECK(e.host == "::1");
  CHECK(e.port == 9000);
  CHECK_THROWS_AS(tn::parse_endpoint("host", false), nubo::Error);
  CHECK_THROWS_AS(tn::parse_endpoint("host:99999", false), nubo::Error);
  CHECK_THROWS_AS(tn::parse_endpoint(":80", false), nubo::Error);
}
