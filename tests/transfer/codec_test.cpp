#include <catch2/catch.hpp>

#include <set>
#include <string_view>
#include <vector>

#include "helpers.hpp"
#include "nubo/error.hpp"
#include "transfer/codec/codec.hpp"
#include "transfer/codec/codec_table.hpp"
#include "transfer/hash.hpp"
#include "transfer/pipeline/options.hpp"

using namespace nubo::transfer;

namespace {
std::vector<std::byte> bytes_of(const std::string& s) {
  auto b = as_bytes(s);
  return {b.begin(), b.end()};
}
}  // namespace

TEST_CASE("every codec round-trips text, and compression pays on it") {
  auto raw = bytes_of(nubo_test::text_bytes(300000, 1));
  Compressor c;
  Decompressor d;
  for (CodecSetting s : {CodecSetting{ChunkCodec::lz4, 1}, CodecSetting{ChunkCodec::lz4, 9},
                         CodecSetting{ChunkCodec::zstd, 1}, CodecSetting{ChunkCodec::zstd, 19},
                         CodecSetting{ChunkCodec::zstd, -5}}) {
    INFO(setting_name(s));
    std::vector<std::byte> stored;
    auto n = c.compress(s, raw, stored);
    REQUIRE(n > 0);
    CHECK(n < raw.size() / 2);
    std::vector<std::byte> out(raw.size());
    d.decompress(s.codec, {stored.data(), n}, out);
    CHECK(out == raw);
  }
}

TEST_CASE("random bytes do not pay: the compressor says to store them raw") {
  auto raw = bytes_of(nubo_test::random_bytes(100000, 2));
  Compressor c;
  std::vector<std::byte> stored;
  CHECK(c.compress({ChunkCodec::zstd, 3}, raw, stored) == 0);
  CHECK(c.compress({ChunkCodec::lz4, 1}, raw, stored) == 0);
  CHECK(c.compress({ChunkCodec::none, 0}, raw, stored) == 0);
}

TEST_CASE("damaged payloads are reported as corrupt, never as more or fewer bytes") {
  auto raw = bytes_of(nubo_test::text_bytes(65536, 3));
  Compressor c;
  Decompressor d;
  for (auto codec : {ChunkCodec::lz4, ChunkCodec::zstd}) {
    std::vector<std::byte> stored;
    auto n = c.compress({codec, 1}, raw, stored);
    REQUIRE(n > 0);
    stored.resize(n);
    std::vector<std::byte> out(raw.size());
    // Truncated, and decoding to a different size than expected.
    CHECK_THROWS_AS(d.decompress(codec, Bytes(stored).first(n / 2), out), nubo::Error);
    std::vector<std::byte> small(raw.size() - 1);
    CHECK_THROWS_AS(d.decompress(codec, stored, small), nubo::Error);
    // Flipped bits: either an error or output that fails the checksum; never a crash.
    for (std::size_t i = 0; i < n; i += 97) {
      auto bad = stored;
      bad[i] ^= std::byte{0x5a};
      try {
        d.decompress(codec, bad, out);
        CHECK((hash64(out) != hash64(raw) || out == raw));
      } catch (const nubo::Error& e) {
        CHECK(e.code() == nubo::Errc::corrupt);
      }
    }
  }
  std::vector<std::byte> out(10);
  CHECK_THROWS_AS(d.decompress(ChunkCodec::none, Bytes(out).first(5), out), nubo::Error);
  CHECK_THROWS_AS(d.decompress(ChunkCodec::zero, Bytes(out).first(1), out), nubo::Error);
}

TEST_CASE("the file hash snapshot restores mid-stream and refuses foreign data") {
  auto data = bytes_of(nubo_test::random_bytes(1000003, 4));
  FileHasher whole;
  whole.update(data);
  FileHasher first;
  first.update(Bytes(data).first(123457));
  auto snap = first.save();
  FileHasher second;
  REQUIRE(second.restore(snap));
  second.update(Bytes(data).subspan(123457));
  CHECK(second.digest() == whole.digest());
  CHECK(second.length() == data.size());

  FileHasher other;
  CHECK_FALSE(other.restore(Bytes(snap).first(snap.size() - 1)));
  auto bad = snap;
  bad[0] ^= std::byte{1};
  CHECK_FALSE(other.restore(bad));

  FileHasher zeros, explicit_zeros;
  zeros.update_zeros(3000000);
  std::vector<std::byte> z(3000000);
  explicit_zeros.update(z);
  CHECK(zeros.digest() == explicit_zeros.digest());
  CHECK(whole.digest().hex().size() == 32);
  // The one-shot hash of bundle members is the streaming one (a file_end's), at every size.
  CHECK(nubo::transfer::hash128(data) == whole.digest());
  for (std::size_t n : {0, 1, 16, 17, 128, 129, 240, 241, 1024, 70000}) {
    FileHasher h;
    h.update(Bytes(data).first(n));
    CHECK(nubo::transfer::hash128(Bytes(data).first(n)) == h.digest());
  }
}

TEST_CASE("the codec table: one row per codec, names, values and levels agree everywhere") {
  std::set<int> ids;
  std::set<int> stored;
  for (const auto& row : codec_rows()) {
    INFO(row.name);
    CHECK(ids.insert(static_cast<int>(row.id)).second);
    CHECK(codec_name(row.id) == row.name);
    if (row.stored) {
      CHECK(stored.insert(static_cast<int>(*row.stored)).second);
      CHECK(chunk_codec_name(*row.stored) == row.name);
      CHECK(valid_chunk_codec(static_cast<std::uint8_t>(*row.stored)));
    }
    if (row.selectable) {
      CHECK(parse_codec(row.name) == row.id);
      CHECK(checked_level(row, 0) == row.default_level);
      CHECK(checked_level(row, row.max_level) == row.max_level);
    } else {
      CHECK_THROWS_WITH(parse_codec(row.name),
                        Catch::Contains("use auto, zstd, lz4, float or none"));
    }
  }
  CHECK_FALSE(valid_chunk_codec(kChunkCodecCount));
  CHECK(selectable_codec_names() == "auto, zstd, lz4, float or none");
  // The levels of each codec, as --help and the docs state them.
  CHECK(fixed_setting(Codec::lz4, 0) == CodecSetting{ChunkCodec::lz4, 1});
  CHECK_THROWS_WITH(fixed_setting(Codec::lz4, 13),
                    Catch::Contains("lz4 level 13 is out of range: use 1 to 12"));
  CHECK(fixed_setting(Codec::zstd, -7) == CodecSetting{ChunkCodec::zstd, -7});
  CHECK(fixed_setting(Codec::zstd, 0) == CodecSetting{ChunkCodec::zstd, 3});
  CHECK_THROWS_WITH(fixed_setting(Codec::zstd, -8), Catch::Contains("use -7 to 22"));
  CHECK_THROWS_WITH(fixed_setting(Codec::none, 1), Catch::Contains("which takes none"));
  CHECK_THROWS_WITH(fixed_setting(Codec::zero, 0), Catch::Contains("not one to choose"));
  CHECK_THROWS_WITH(fixed_setting(Codec::automatic, 0), Catch::Contains("no fixed setting"));
  CHECK(auto_max_level(0) == 12);
  CHECK(auto_max_level(19) == 19);
  CHECK_THROWS_WITH(auto_max_level(20), Catch::Contains("the highest zstd level it may use") &&
                                            Catch::Contains("use 1 to 19"));
  CHECK(codec_name(static_cast<Codec>(7)) == "unknown");
  // The public view is the selectable rows, in order, with their levels and help.
  const auto infos = nubo::transfer::codecs();
  std::vector<std::string_view> names;
  for (const auto& info : infos) {
    INFO(info.name);
    names.push_back(info.name);
    const CodecRow* row = find_codec(info.codec);
    REQUIRE(row);
    CHECK(row->name == info.name);
    CHECK(info.min_level == row->min_level);
    CHECK(info.max_level == row->max_level);
    CHECK(info.default_level == row->default_level);
    CHECK(info.help == row->help);
  }
  CHECK(names == std::vector<std::string_view>{"auto", "zstd", "lz4", "float", "none"});
}
