// Archives made to attack the reader or the unpacker: each is refused, with the entry named,
// before anything is written or any large allocation is made.
#include <sys/stat.h>

#include <catch2/catch.hpp>

#include "helpers.hpp"
#include "nubo/error.hpp"
#include "nubo/transfer.hpp"
#include "transfer/archive/archive_writer.hpp"
#include "transfer/bytes.hpp"
#include "transfer/format/format.hpp"
#include "transfer/hash.hpp"
#include "transfer/paths.hpp"
#include "transfer/pipeline/filter.hpp"
#include "transfer/pipeline/target_dir.hpp"

namespace xfer = nubo::transfer;
namespace fmt = nubo::transfer::format;
using nubo_test::TempDir;

namespace {

struct Item {
  fmt::EntryKind kind;
  std::string path;
  std::string content_or_target;
};

// Writes an archive with exactly these entries, bypassing pack's own checks.
void craft(const std::string& path, const std::vector<Item>& items) {
  auto w = xfer::ArchiveWriter::create(xfer::open_write(path), 4096);
  for (const auto& it : items) {
    fmt::EntryMeta m;
    m.kind = it.kind;
    m.path = it.path;
    m.mode = it.kind == fmt::EntryKind::directory ? 0755 : 0644;
    if (it.kind == fmt::EntryKind::symlink) m.link_target = it.content_or_target;
    if (it.kind == fmt::EntryKind::file) m.size = it.content_or_target.size();
    auto e = w.add_entry(m);
    if (it.kind != fmt::EntryKind::file) continue;
    xfer::FileHasher h;
    auto data = xfer::as_bytes(it.content_or_target);
    for (std::uint64_t off = 0; off < data.size(); off += 4096) {
      auto piece = data.subspan(off, std::min<std::size_t>(4096, data.size() - off));
      w.add_chunk(e, off, xfer::ChunkCodec::none, 0, static_cast<std::uint32_t>(piece.size()),
                  xfer::hash64(piece), piece);
      h.update(piece);
    }
    w.end_file(e, h.digest());
  }
  w.finish();
}

void expect_refused(const std::string& archive, const std::string& out, const std::string& name) {
  try {
    xfer::unpack(archive, out, {.sync = false});
    FAIL("unpack accepted it");
  } catch (const nubo::Error& e) {
    CHECK(e.code() == nubo::Errc::corrupt);
    CHECK_THAT(e.what(), Catch::Contains("'" + name + "'") && Catch::Contains("refused"));
  }
  // Nothing was written: the target holds no entry at all.
  if (::access(out.c_str(), F_OK) == 0) CHECK(nubo_test::tree(out, false).empty());
}

}  // namespace

TEST_CASE("absolute paths and '..' are refused, naming the entry") {
  TempDir dir;
  craft(dir / "abs.nubo", {{fmt::EntryKind::file, "ok.txt", "fine"},
                           {fmt::EntryKind::file, "/tmp/nubo-evil", "evil"}});
  expect_refused(dir / "abs.nubo", dir / "out1", "/tmp/nubo-evil");
  craft(dir / "dots.nubo", {{fmt::EntryKind::file, "a/../../evil", "evil"}});
  expect_refused(dir / "dots.nubo", dir / "out2", "a/../../evil");
  CHECK(::access((dir.path() + "/../evil").c_str(), F_OK) != 0);
  // list refuses it too: no caller ever sees such a path.
  CHECK_THROWS_WITH(xfer::list(dir / "dots.nubo"), Catch::Contains("'a/../../evil'"));
}

TEST_CASE("links leading out of the target are refused, and entries below a link too") {
  TempDir dir;
  craft(dir / "l1.nubo", {{fmt::EntryKind::symlink, "escape", "../../etc"}});
  expect_refused(dir / "l1.nubo", dir / "out1", "escape");
  craft(dir / "l2.nubo", {{fmt::EntryKind::symlink, "abs", "/etc/passwd"}});
  expect_refused(dir / "l2.nubo", dir / "out2", "abs");
  craft(dir / "l3.nubo", {{fmt::EntryKind::directory, "d", ""},
                          {fmt::EntryKind::symlink, "d/up", ".."},
                          {fmt::EntryKind::symlink, "d/esc", "up/.."}});
  expect_refused(dir / "l3.nubo", dir / "out3", "d/esc");
  craft(dir / "l4.nubo",
        {{fmt::EntryKind::symlink, "s", "."}, {fmt::EntryKind::file, "s/x", "through the link"}});
  expect_refused(dir / "l4.nubo", dir / "out4", "s/x");
  craft(dir / "dup.nubo", {{fmt::EntryKind::file, "x", "1"}, {fmt::EntryKind::file, "x", "2"}});
  CHECK_THROWS_WITH(xfer::list(dir / "dup.nubo"), Catch::Contains("'x' appears twice"));
}

TEST_CASE("unpack never writes through a symlink already in the target") {
  TempDir dir;
  nubo_test::make_dirs(dir / "elsewhere");
  nubo_test::make_dirs(dir / "out");
  REQUIRE(::symlink((dir / "elsewhere").c_str(), (dir / "out/d").c_str()) == 0);
  craft(dir / "a.nubo", {{fmt::EntryKind::file, "d/x", "data"}});
  CHECK_THROWS_WITH(xfer::unpack(dir / "a.nubo", dir / "out", {.sync = false}),
                    Catch::Contains("refusing to write through it"));
  CHECK(::access((dir / "elsewhere/x").c_str(), F_OK) != 0);
}

TEST_CASE("the target reaches each directory from the one above it, never through a link") {
  TempDir dir;
  xfer::TargetDir target(dir / "out");
  for (auto d : {"a", "a/b", "a/c", "a/b/deep"}) target.make_dir(d);
  // Siblings, a child, a parent and the root, in turn: each file lands in its own directory.
  auto put = [&](const std::string& path) {
    auto fd = target.open_file(path, xfer::paths::leaf(path), xfer::TargetDir::Open::replace);
    fd.pwrite_all(xfer::as_bytes(std::string_view(path)), 0);
  };
  for (auto f : {"a/b/1", "a/c/2", "a/b/deep/3", "a/b/4", "a/5", "6", "a/c/7"}) put(f);
  for (auto f : {"a/b/1", "a/c/2", "a/b/deep/3", "a/b/4", "a/5", "6", "a/c/7"})
    CHECK(nubo_test::read_file(dir / ("out/" + std::string(f))) == f);

  // A link put where a directory was: reaching it anew is refused...
  nubo_test::make_dirs(dir / "elsewhere");
  REQUIRE(::rename((dir / "out/a/b").c_str(), (dir / "out/a/b-moved").c_str()) == 0);
  REQUIRE(::symlink((dir / "elsewhere").c_str(), (dir / "out/a/b").c_str()) == 0);
  CHECK_THROWS_WITH(put("a/b/8"), Catch::Contains("refusing to write through it"));
  // ... and a directory reached before the swap is still the directory, wherever it went.
  target.make_dir("a/c/sub");
  REQUIRE(::rename((dir / "out/a/c").c_str(), (dir / "out/a/c-moved").c_str()) == 0);
  REQUIRE(::symlink((dir / "elsewhere").c_str(), (dir / "out/a/c").c_str()) == 0);
  put("a/c/sub/9");
  CHECK(nubo_test::read_file(dir / "out/a/c-moved/sub/9") == "a/c/sub/9");
  CHECK(::access((dir / "elsewhere/8").c_str(), F_OK) != 0);
  CHECK(::access((dir / "elsewhere/sub").c_str(), F_OK) != 0);
}

TEST_CASE("sizes that would make the reader allocate gigabytes are refused") {
  TempDir dir;
  craft(dir / "ok.nubo", {{fmt::EntryKind::file, "f", "content"}});
  auto good = nubo_test::read_file(dir / "ok.nubo");

  // 1. A trailer pointing at an index of 100 GB.
  {
    auto b = good;
    fmt::Trailer t{64, 100ull << 30};
    auto tail = fmt::encode_trailer(t);
    b.replace(b.size() - fmt::kTrailerSize, fmt::kTrailerSize,
              reinterpret_cast<const char*>(tail.data()), tail.size());
    nubo_test::write_file(dir / "h1.nubo", b);
    CHECK_THROWS_WITH(xfer::list(dir / "h1.nubo"), Catch::Contains("does not fit"));
  }
  // 2. An index claiming 2^40 entries and chunks, consistent checksums and all.
  {
    std::vector<std::byte> payload;
    xfer::ByteWriter w(payload);
    w.put<std::uint64_t>(1ull << 40);
    w.put<std::uint64_t>(1ull << 40);
    w.put_zeros(64);
    fmt::RecordHeader r;
    r.type = fmt::RecordType::index;
    r.raw_size = r.stored_size = static_cast<std::uint32_t>(payload.size());
    r.hash = xfer::hash64(payload);
    r.payload_check = fmt::payload_check(payload);
    auto write = [&](const std::string& path, const fmt::RecordHeader& record) {
      auto archive = xfer::open_write(path);
      auto head = fmt::encode_header({});
      archive.pwrite_all(head, 0);
      auto rh = fmt::encode_record_header(record);
      archive.pwrite_all(rh, 64);
      archive.pwrite_all(payload, 64 + rh.size());
      auto tail = fmt::encode_trailer({64, rh.size() + payload.size()});
      archive.pwrite_all(tail, 64 + rh.size() + payload.size());
      archive.close();
    };
    write(dir / "h2.nubo", r);
    CHECK_THROWS_WITH(xfer::list(dir / "h2.nubo"), Catch::Contains("cannot fit"));
    // The same bytes declared a compressed index of 3 GiB: refused before it is decoded.
    r.codec = xfer::ChunkCodec::zstd;
    r.raw_size = 3u << 30;
    write(dir / "h2z.nubo", r);
    CHECK_THROWS_WITH(xfer::list(dir / "h2z.nubo"), Catch::Contains("1 GiB limit"));
    // ... or of 1 MiB that its bytes do not decode to.
    r.raw_size = 1 << 20;
    write(dir / "h2y.nubo", r);
    CHECK_THROWS_AS(xfer::list(dir / "h2y.nubo"), nubo::Error);
  }
  // 3. A chunk record claiming 4 GiB raw: refused by its header before any buffer is sized.
  {
    fmt::RecordHeader r;
    r.type = fmt::RecordType::chunk;
    r.raw_size = 0xffffffffu;
    r.stored_size = 0xffffffffu;
    CHECK_THROWS_WITH(fmt::decode_record_header(fmt::encode_record_header(r), 4096),
                      Catch::Contains("raw size"));
  }
  // 4. A file of 2^60 bytes in the index: its chunk list cannot match.
  {
    fmt::Index idx;
    fmt::IndexEntry e;
    e.meta.path = "huge";
    e.meta.size = 1ull << 60;
    e.record_offset = 64;
    e.chunk_count = 1;
    idx.entries.push_back(e);
    idx.chunks.push_back({});
    CHECK_THROWS_AS(fmt::decode_index(fmt::encode_index(idx), fmt::kVersionMajor, 4096, 64, 1000),
                    nubo::Error);
  }
  // 5. Not an archive at all, or empty.
  nubo_test::write_file(dir / "junk", std::string(1000, 'j'));
  CHECK_THROWS_WITH(xfer::list(dir / "junk"), Catch::Contains("not a nubo archive"));
  nubo_test::write_file(dir / "empty", "");
  CHECK_THROWS_WITH(xfer::list(dir / "empty"), Catch::Contains("too short"));
}

TEST_CASE("unpack drops setuid, setgid and sticky bits unless told to keep them") {
  TempDir t;
  nubo_test::write_file(t / "src/tool", "#!/bin/sh\n");
  nubo_test::make_dirs(t / "src/shared");
  REQUIRE(::chmod((t / "src/tool").c_str(), 06755) == 0);
  REQUIRE(::chmod((t / "src/shared").c_str(), 01777) == 0);
  xfer::pack({t / "src"}, t / "a.nubo", {});
  auto mode = [](const std::string& path) {
    struct stat st {};
    REQUIRE(::stat(path.c_str(), &st) == 0);
    return st.st_mode & 07777;
  };
  xfer::unpack(t / "a.nubo", t / "plain", {});
  CHECK(mode(t / "plain/src/tool") == 0755);
  CHECK(mode(t / "plain/src/shared") == 0777);
  // A second run trusts what it finds: the dropped bits are not a difference to redo.
  auto again = xfer::unpack(t / "a.nubo", t / "plain", {});
  CHECK(again.bytes_skipped == again.bytes);
  xfer::UnpackOptions keep;
  keep.preserve_special_modes = true;
  xfer::unpack(t / "a.nubo", t / "kept", keep);
  CHECK(mode(t / "kept/src/tool") == 06755);
  CHECK(mode(t / "kept/src/shared") == 01777);
}

TEST_CASE("an entry named as another entry's temporary file is refused, not overwritten") {
  TempDir dir;
  craft(dir / "tmp.nubo", {{fmt::EntryKind::directory, "d", ""},
                           {fmt::EntryKind::file, "d/.x.nubo-part", "the user's own file"},
                           {fmt::EntryKind::file, "d/x", "another"}});
  expect_refused(dir / "tmp.nubo", dir / "out", "d/.x.nubo-part");
  // Such a name alone is an ordinary file.
  craft(dir / "alone.nubo", {{fmt::EntryKind::file, ".y.nubo-part", "kept"}});
  xfer::unpack(dir / "alone.nubo", dir / "out2", {});
  CHECK(nubo_test::read_file(dir / "out2/.y.nubo-part") == "kept");
}

TEST_CASE("filters match names at any depth, paths, anchored paths and directories only") {
  xfer::PathFilter f({"*.tmp", "logs/", "/src/build", "cache/*.bin"}, {"keep.tmp"});
  CHECK(f.excluded("a.tmp", false));
  CHECK(f.excluded("src/deep/b.tmp", false));
  CHECK(!f.excluded("src/deep/keep.tmp", false));  // included back
  CHECK(f.excluded("src/logs", true));
  CHECK(!f.excluded("src/logs", false));  // a file called logs is not a directory
  CHECK(f.excluded("src/build", true));
  CHECK(!f.excluded("other/src/build", true));     // anchored at the top
  CHECK(f.excluded("x/cache/w.bin", false));       // a path pattern at any depth
  CHECK(!f.excluded("x/cache/sub/w.bin", false));  // '*' does not cross '/'
  CHECK(!xfer::PathFilter().excluded("anything", false));
  CHECK_THROWS_WITH(xfer::PathFilter({"a[b"}, {}), Catch::Contains("'a[b'"));
  CHECK_THROWS_WITH(xfer::PathFilter({}, {""}), Catch::Contains("--include pattern"));
}

TEST_CASE("a name holding a NUL or control bytes is shown whole, escaped, in the refusal") {
  TempDir dir;
  craft(dir / "nul.nubo", {{fmt::EntryKind::file, std::string("evil\0tail\n", 10), "x"}});
  expect_refused(dir / "nul.nubo", dir / "out", "evil\\x00tail\\x0a");
  CHECK(xfer::paths::shown("a\\b") == "a\\\\b");
}
