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

TEST_CASE("bundle messages round trip and reject lies about their sizes", "[net]") {
  tn::BundleMeta b;
  b.codec = nubo::transfer::ChunkCodec::zstd;
  b.level = 3;
  b.raw_size = 1000;
  b.raw_hash = 42;
  b.stored_size = 3;
  b.members = {{7, {}}, {9, {}, 7}};
  b.members[1].hash.bytes[0] = std::byte{5};
  auto message = [&](const tn::BundleMeta& m) {
    auto out = tn::encode_bundle_head(m);
    out.resize(out.size() + m.stored_size, std::byte{1});
    return out;
  };
  tn::BundleMeta back;
  auto payload = tn::decode_bundle(message(b), 4096, back);
  CHECK(payload.size() == 3);
  CHECK(back.raw_size == 1000);
  CHECK(back.raw_hash == 42);
  REQUIRE(back.members.size() == 2);
  CHECK(back.members[1].entry == 9);
  CHECK(back.members[1].hash == b.members[1].hash);
  CHECK(back.members[0].source == tn::kNoSource);
  CHECK(back.members[1].source == 7);
  // A source must be an earlier entry: references never form a cycle.
  auto cycle = b;
  cycle.members[0].source = 9;
  CHECK_THROWS_WITH(tn::decode_bundle(message(cycle), 4096, back),
                    Catch::Contains("not an earlier entry"));
  cycle.members[0].source = 7;
  CHECK_THROWS_WITH(tn::decode_bundle(message(cycle), 4096, back),
                    Catch::Contains("not an earlier entry"));

  CHECK_THROWS_WITH(tn::decode_bundle(message(b), 512, back), Catch::Contains("raw size"));
  auto m = message(b);
  m.pop_back();
  CHECK_THROWS_WITH(tn::decode_bundle(m, 4096, back), Catch::Contains("does not match"));
  m = message(b);
  m.push_back(std::byte{0});
  CHECK_THROWS_WITH(tn::decode_bundle(m, 4096, back), Catch::Contains("does not match"));
  auto lie = b;
  lie.stored_size = 1001;
  CHECK_THROWS_WITH(tn::decode_bundle(message(lie), 4096, back), Catch::Contains("stored size"));
  lie = b;
  lie.codec = nubo::transfer::ChunkCodec::none;
  CHECK_THROWS_WITH(tn::decode_bundle(message(lie), 4096, back),
                    Catch::Contains("stored size differs"));
  lie = b;
  lie.members.clear();
  CHECK_THROWS_WITH(tn::decode_bundle(message(lie), 4096, back), Catch::Contains("0 members"));
  // A member count far above what the message holds, or above the limit.
  m = message(b);
  m[1] = std::byte{0x01};
  CHECK_THROWS_AS(tn::decode_bundle(m, 4096, back), nubo::Error);
  m[1] = std::byte{0x00};
  m[2] = std::byte{0x01};
  CHECK_THROWS_WITH(tn::decode_bundle(m, 4096, back), Catch::Contains("members, outside"));
  CHECK(tn::max_payload(tn::MsgType::bundle, 4096) ==
        tn::kBundleHeadSize + tn::kBundleMemberSize * tn::kMaxBundleMembers + 4096);
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
