// Bundles: small files, directories and links stored together in one compressed record (format
// version 2). Each comes back whole through every reader, damage in a bundle is caught before
// any of its files is placed, and archives of format 1.0 are still read.
#include <catch2/catch.hpp>

#include "helpers.hpp"
#include "nubo/error.hpp"
#include "nubo/transfer.hpp"
#include "transfer/archive/archive_reader.hpp"
#include "transfer/archive/archive_writer.hpp"
#include "transfer/bytes.hpp"
#include "transfer/format/format.hpp"
#include "transfer/hash.hpp"

namespace xfer = nubo::transfer;
namespace fmt = nubo::transfer::format;
using nubo_test::TempDir;

namespace {

constexpr std::uint64_t kChunk = 64 << 10;

// Small files of every size up to and past half a chunk (the bundling limit), empty ones,
// directories and links, with a large file in the middle of the walk.
void make_tree(const std::string& root) {
  for (int i = 0; i < 120; ++i) {
    auto size = static_cast<std::size_t>(i * i * 2);  // 0 .. ~28 KB: all bundled
    nubo_test::write_file(root + "/d" + std::to_string(i % 7) + "/f" + std::to_string(i),
                          nubo_test::text_bytes(size, 40 + static_cast<std::uint64_t>(i)));
  }
  nubo_test::write_file(root + "/d3/large.bin", nubo_test::random_bytes(200000, 41));
  nubo_test::make_dirs(root + "/empty/dir");
  REQUIRE(::symlink("../d1/f1", (root + "/d2/link").c_str()) == 0);
}

xfer::PackOptions options() {
  return {.codec = xfer::Codec::zstd, .chunk_size = kChunk, .sync = false};
}

}  // namespace

TEST_CASE("small files, directories and links travel in bundles and come back whole") {
  TempDir dir;
  make_tree(dir / "src");
  auto archive = dir / "a.nubo";
  auto packed = xfer::pack({dir / "src"}, archive, options());

  auto a = xfer::ArchiveFile::open(archive);
  std::size_t bundled = 0, bundles = 0;
  for (const auto& e : a.index().entries) bundled += e.bundled ? 1 : 0;
  for (const auto& c : a.index().chunks) bundles += c.bundle ? 1 : 0;
  CHECK(bundled == a.index().entries.size() - 1);  // all but large.bin
  // The chunk size cuts them: at least content / chunk of them, and not many more.
  auto content = static_cast<std::size_t>(packed.bytes - 200000);
  CHECK(bundles > content / kChunk);
  CHECK(bundles < 2 * content / kChunk + 2);
  CHECK(packed.files == 121);

  // list: bundled files have no chunks of their own and a share of their bundle's bytes.
  std::uint64_t stored = 0;
  for (const auto& e : xfer::list(archive)) {
    if (e.kind != xfer::EntryKind::file) continue;
    CHECK((e.chunks == 0) == (e.path != "src/d3/large.bin"));
    stored += e.stored_size;
  }
  CHECK(stored < packed.bytes);

  auto checked = xfer::verify(archive);
  CHECK(checked.files == 121);
  CHECK(checked.bytes == packed.bytes);

  xfer::unpack(archive, dir / "out", {.sync = false});
  std::string why;
  CHECK(nubo_test::same_tree(dir / "src", dir / "out/src", &why));
  INFO(why);

  // Random access inside bundled files, at their start, middle and end.
  xfer::Reader reader(archive);
  for (int i : {1, 2, 50, 119}) {
    auto rel = "src/d" + std::to_string(i % 7) + "/f" + std::to_string(i);
    auto whole = nubo_test::read_file(dir / rel);
    auto got = reader.read(rel, 0, whole.size() + 10);
    CHECK(std::string(reinterpret_cast<const char*>(got.data()), got.size()) == whole);
    if (whole.size() > 10) {
      auto part = reader.read(rel, whole.size() / 2, 7);
      CHECK(std::string(reinterpret_cast<const char*>(part.data()), part.size()) ==
            whole.substr(whole.size() / 2, 7));
    }
  }
}

TEST_CASE("an unpack run again skips bundled files already in place and rewrites changed ones") {
  TempDir dir;
  make_tree(dir / "src");
  auto archive = dir / "a.nubo";
  xfer::pack({dir / "src"}, archive, options());
  xfer::unpack(archive, dir / "out", {.sync = false});
  nubo_test::write_file(dir / "out/src/d5/f40", "changed");
  auto again = xfer::unpack(archive, dir / "out", {.sync = false});
  CHECK(again.bytes_skipped > 0);
  CHECK(again.bytes_skipped < again.bytes);
  std::string why;
  CHECK(nubo_test::same_tree(dir / "src", dir / "out/src", &why));
  INFO(why);
}

TEST_CASE("a damaged bundle is named, and unpack places none of its files") {
  TempDir dir;
  make_tree(dir / "src");
  auto archive = dir / "a.nubo";
  xfer::pack({dir / "src"}, archive, options());
  auto a = xfer::ArchiveFile::open(archive);
  // The bundle holding src/d1/f1: flip a byte in its payload.
  std::size_t victim = 0;
  for (std::size_t i = 0; i < a.index().entries.size(); ++i)
    if (a.index().entries[i].meta.path == "src/d1/f1") victim = i;
  const auto& chunk = a.index().chunks[a.index().entries[victim].first_chunk];
  REQUIRE(chunk.bundle);
  auto bytes = nubo_test::read_file(archive);
  bytes[chunk.record_offset + fmt::kRecordHeaderSize + chunk.stored_size / 2] ^= 0x10;
  nubo_test::write_file(archive, bytes);

  CHECK_THROWS_WITH(xfer::verify(archive),
                    Catch::Contains("bundle of entries") && Catch::Contains("damaged"));
  CHECK_THROWS_AS(xfer::unpack(archive, dir / "out", {.sync = false}), nubo::Error);
  auto [first, end] = a.bundle_members(victim);
  for (auto i = first; i < end; ++i) {
    const auto& e = a.index().entries[i];
    if (e.meta.kind != fmt::EntryKind::file) continue;
    INFO(e.meta.path);
    CHECK(::access((dir / "out/" + e.meta.path).c_str(), F_OK) != 0);
  }
}

TEST_CASE("a bundle whose entry records disagree with the index is refused") {
  TempDir dir;
  auto archive = dir / "forged.nubo";
  {
    auto w = xfer::ArchiveWriter::create(xfer::open_write(archive), 4096);
    fmt::EntryMeta inside;
    inside.path = "inside";
    inside.size = 5;
    fmt::EntryMeta claimed = inside;
    claimed.path = "claimed";
    std::vector<std::byte> raw;
    xfer::append(raw, xfer::as_bytes(std::string("hello")));
    xfer::append(raw, fmt::encode_entry(inside));
    w.add_bundle({claimed}, {xfer::hash128(xfer::as_bytes(std::string("hello")))},
                 xfer::ChunkCodec::none, 0, static_cast<std::uint32_t>(raw.size()), 5,
                 xfer::hash64(raw), raw);
    w.finish();
  }
  CHECK(xfer::list(archive).at(0).path == "claimed");  // the index alone
  CHECK_THROWS_WITH(xfer::verify(archive),
                    Catch::Contains("'inside'") && Catch::Contains("does not match the index"));
  CHECK_THROWS_WITH(xfer::unpack(archive, dir / "out", {.sync = false}),
                    Catch::Contains("does not match the index"));
  CHECK(::access((dir / "out/claimed").c_str(), F_OK) != 0);
}

TEST_CASE("archives of format 1.0 are still listed, verified, read and unpacked") {
  const std::string v1 = NUBO_TEST_DATA_DIR "/format-1.0.nubo";
  auto entries = xfer::list(v1);
  REQUIRE(entries.size() == 3);
  CHECK(entries[1].path == "data/notes.txt");
  CHECK(entries[1].chunks == 3);
  CHECK(xfer::verify(v1).files == 1);
  TempDir dir;
  xfer::unpack(v1, dir / "out", {.sync = false});
  auto notes = nubo_test::read_file(dir / "out/data/notes.txt");
  CHECK(notes.substr(0, 29) == "line 0 of a version 1 archive");
  CHECK(notes.size() == entries[1].size);
  xfer::Reader reader(v1);
  auto tail = reader.read("data/notes.txt", notes.size() - 30, 100);
  CHECK(std::string(reinterpret_cast<const char*>(tail.data()), tail.size()) ==
        notes.substr(notes.size() - 30));
}
