#include <catch2/catch.hpp>

#include "nubo/error.hpp"
#include "transfer/format/format.hpp"
#include "transfer/paths.hpp"

using namespace nubo::transfer;
using namespace nubo::transfer::format;

TEST_CASE("headers, records and trailers round-trip and reject any changed byte") {
  Header h;
  h.chunk_size = 1 << 20;
  auto head = encode_header(h);
  CHECK(decode_header(head).chunk_size == h.chunk_size);
  for (std::size_t i = 0; i < head.size(); ++i) {
    auto bad = head;
    bad[i] ^= std::byte{0x10};
    CHECK_THROWS_AS(decode_header(bad), nubo::Error);
  }
  RecordHeader r;
  r.type = RecordType::chunk;
  r.codec = ChunkCodec::zstd;
  r.level = 3;
  r.entry = 7;
  r.raw_size = 1 << 20;
  r.offset = 5ull << 20;
  r.stored_size = 1000;
  r.hash = 0x1234;
  auto rh = encode_record_header(r);
  auto back = decode_record_header(rh, 1 << 20);
  CHECK(back.entry == 7);
  CHECK(back.offset == r.offset);
  CHECK(back.stored_size == 1000);
  for (std::size_t i = 0; i < rh.size(); ++i) {
    auto bad = rh;
    bad[i] ^= std::byte{0x01};
    CHECK_THROWS_AS(decode_record_header(bad, 1 << 20), nubo::Error);
  }
  Trailer t{100, 200};
  auto tail = encode_trailer(t);
  CHECK(decode_trailer(tail).index_size == 200);
}

TEST_CASE("a newer major version is unsupported, not corrupt") {
  Header h;
  h.version_major = kVersionMajor + 1;
  auto head = encode_header(h);
  try {
    decode_header(head);
    FAIL("accepted a newer version");
  } catch (const nubo::Error& e) {
    CHECK(e.code() == nubo::Errc::unsupported);
  }
}

TEST_CASE("record sizes beyond the chunk size are refused before any allocation") {
  RecordHeader r;
  r.type = RecordType::chunk;
  r.codec = ChunkCodec::none;
  r.raw_size = 64 << 20;
  r.stored_size = 64 << 20;
  CHECK_THROWS_WITH(decode_record_header(encode_record_header(r), 4 << 20),
                    Catch::Contains("raw size"));
  r.raw_size = 1000;
  r.stored_size = 2000;  // more than raw: never written by pack
  CHECK_THROWS_WITH(decode_record_header(encode_record_header(r), 4 << 20),
                    Catch::Contains("stored size"));
}

TEST_CASE("an index whose counts cannot fit its bytes is refused") {
  Index idx;
  auto payload = encode_index(idx);
  // Claim 2^40 entries in a 16-byte payload.
  payload[5] = std::byte{1};
  CHECK_THROWS_WITH(decode_index(payload, kVersionMajor, 4 << 20, 64, 1000),
                    Catch::Contains("cannot fit"));
}

TEST_CASE("an index round-trips and checks chunk counts against sizes") {
  Index idx;
  IndexEntry e;
  e.meta.path = "a/b.bin";
  e.meta.size = 10000;
  e.record_offset = 64;
  e.chunk_count = 3;  // 10000 bytes in 4096-byte chunks
  idx.entries.push_back(e);
  for (int i = 0; i < 3; ++i) {
    IndexChunk c;
    c.record_offset = 200 + 100 * static_cast<std::uint64_t>(i);
    c.raw_size = i < 2 ? 4096 : 10000 - 8192;
    c.stored_size = 10;
    c.codec = ChunkCodec::zstd;
    idx.chunks.push_back(c);
  }
  auto payload = encode_index(idx);
  auto back = decode_index(payload, kVersionMajor, 4096, 64, 100000);
  REQUIRE(back.entries.size() == 1);
  CHECK(back.entries[0].meta.path == "a/b.bin");
  CHECK(back.chunks[2].raw_size == 10000 - 8192);
  idx.entries[0].meta.size = 20000;  // would need 5 chunks
  CHECK_THROWS_AS(decode_index(encode_index(idx), kVersionMajor, 4096, 64, 100000), nubo::Error);
}

TEST_CASE("archive paths must be relative and normalised") {
  CHECK(paths::problem("a/b c/é.txt").empty());
  CHECK(paths::problem("/etc/passwd") == "is absolute");
  CHECK(paths::problem("a/../../x") == "has a '..' component");
  CHECK(paths::problem("..") == "has a '..' component");
  CHECK(paths::problem("a//b") != "");
  CHECK(paths::problem("./a") != "");
  CHECK(paths::problem("a/") != "");
  CHECK(paths::problem("") != "");
  CHECK(paths::problem(std::string("a\0b", 3)) != "");
  CHECK_THROWS_WITH(paths::check_entry("/etc/passwd"),
                    Catch::Contains("'/etc/passwd'") && Catch::Contains("refused"));
}

TEST_CASE("links may not lead out of the tree") {
  CHECK_NOTHROW(paths::check_link("a/l", "b"));
  CHECK_NOTHROW(paths::check_link("a/l", "../x"));
  CHECK_NOTHROW(paths::check_link("a/b/l", "../../x/y"));
  CHECK_THROWS_WITH(paths::check_link("l", "../x"), Catch::Contains("climbs out"));
  CHECK_THROWS_WITH(paths::check_link("a/l", "/etc"), Catch::Contains("absolute"));
  CHECK_THROWS_WITH(paths::check_link("a/l", "../../etc"), Catch::Contains("'a/l'"));
  // Through another link: "up" may lead anywhere inside, so '..' after it is refused.
  CHECK_THROWS_WITH(paths::check_link("a/b/esc", "up/.."), Catch::Contains("after a name"));
}
