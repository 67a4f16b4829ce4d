// Archives whose index lies about sizes and offsets, checksums and all: sums that would wrap
// past 2^64, sizes a span would read as "to the end", and compressed indexes that declare a
// gigabyte. Every reader refuses them before it reads a byte out of place, allocates for them,
// or writes anything.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zstd.h>

#include <catch2/catch.hpp>
#include <functional>

#include "helpers.hpp"
#include "nubo/error.hpp"
#include "nubo/transfer.hpp"
#include "transfer/archive/archive_writer.hpp"
#include "transfer/bytes.hpp"
#include "transfer/format/format.hpp"
#include "transfer/hash.hpp"

namespace xfer = nubo::transfer;
namespace fmt = nubo::transfer::format;
using nubo_test::TempDir;

namespace {

constexpr std::uint64_t k2to64minus(std::uint64_t n) {
  return ~std::uint64_t{0} - n + 1;
}

fmt::EntryMeta file_meta(const std::string& path, std::uint64_t size) {
  fmt::EntryMeta m;
  m.path = path;
  m.size = size;
  return m;
}

// A bundle of file `a` (16 bytes at 0) and file `b` of `b_size` bytes right after it, with its
// entry records at `table_offset`: the offsets a writer computes, the sizes an attacker picks.
void craft_bundle(const std::string& path, std::uint64_t b_size, std::uint32_t table_offset) {
  auto w = xfer::ArchiveWriter::create(xfer::open_write(path), 4096);
  std::vector<fmt::EntryMeta> members{file_meta("a", 16), file_meta("b", b_size)};
  std::vector<std::byte> raw(table_offset, std::byte{'x'});
  for (const auto& m : members) xfer::append(raw, fmt::encode_entry(m));
  std::vector<xfer::Hash128> hashes{xfer::hash128(xfer::Bytes(raw).first(16)),
                                    xfer::hash128(xfer::Bytes(raw).subspan(16))};
  w.add_bundle(members, hashes, xfer::ChunkCodec::none, 0, static_cast<std::uint32_t>(raw.size()),
               table_offset, xfer::hash64(raw), raw);
  w.finish();
}

// Every reader refuses the archive with a message containing `problem`, and unpack leaves the
// target as it found it: no member, no journal.
void expect_every_reader_refuses(const TempDir& dir, const std::string& archive,
                                 const std::string& problem) {
  CHECK_THROWS_WITH(xfer::list(archive), Catch::Contains(problem));
  CHECK_THROWS_WITH(xfer::Reader(archive), Catch::Contains(problem));
  CHECK_THROWS_WITH(xfer::verify(archive, {.threads = 1}), Catch::Contains(problem));
  nubo_test::make_dirs(dir / "out");
  try {
    xfer::unpack(archive, dir / "out", {.sync = false});
    FAIL("unpack accepted it");
  } catch (const nubo::Error& e) {
    CHECK(e.code() == nubo::Errc::corrupt);
    CHECK_THAT(e.what(), Catch::Contains(problem));
  }
  CHECK(nubo_test::tree(dir / "out", false).empty());
  CHECK(::access((dir / "out/.nubo-unpack.journal").c_str(), F_OK) != 0);
}

// The growth of this process's peak resident memory while `f` runs, measured in a child so
// that the test's own history does not hide it.
std::uint64_t peak_growth(const std::function<void()>& f) {
  int pipe_fds[2];
  REQUIRE(::pipe(pipe_fds) == 0);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::close(pipe_fds[0]);
    rusage before{}, after{};
    ::getrusage(RUSAGE_SELF, &before);
    try {
      f();
    } catch (...) {
    }
    ::getrusage(RUSAGE_SELF, &after);
    const std::uint64_t grown = static_cast<std::uint64_t>(after.ru_maxrss - before.ru_maxrss)
                                << 10;
    const auto n = ::write(pipe_fds[1], &grown, sizeof grown);
    ::_exit(n == sizeof grown ? 0 : 1);
  }
  ::close(pipe_fds[1]);
  std::uint64_t grown = ~std::uint64_t{0};
  const auto n = ::read(pipe_fds[0], &grown, sizeof grown);
  ::close(pipe_fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  REQUIRE(n == sizeof grown);
  return grown;
}

// `archive` with its index replaced by a zstd frame of `declared` bytes: `prefix`, then zeros.
// Compressed as a stream, so the test itself never holds the gigabyte it declares.
void replace_index(const std::string& archive, const std::vector<std::byte>& prefix,
                   std::uint64_t declared, int window_log = 0) {
  auto bytes = nubo_test::read_file(archive);
  std::array<std::byte, fmt::kTrailerSize> tail{};
  std::memcpy(tail.data(), bytes.data() + bytes.size() - tail.size(), tail.size());
  const auto t = fmt::decode_trailer(tail);
  bytes.resize(t.index_offset);

  std::vector<std::byte> frame(ZSTD_compressBound(1 << 20));
  std::vector<std::byte> compressed;
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  ZSTD_CCtx_setPledgedSrcSize(cctx, declared);
  if (window_log) ZSTD_CCtx_setParameter(cctx, ZSTD_c_windowLog, window_log);
  const std::vector<std::byte> zeros(1 << 20);
  std::uint64_t fed = 0;
  auto feed = [&](xfer::Bytes piece, bool last) {
    ZSTD_inBuffer in{piece.data(), piece.size(), 0};
    for (;;) {
      ZSTD_outBuffer out{frame.data(), frame.size(), 0};
      const auto left = ZSTD_compressStream2(cctx, &out, &in, last ? ZSTD_e_end : ZSTD_e_continue);
      if (ZSTD_isError(left)) throw std::runtime_error(ZSTD_getErrorName(left));
      xfer::append(compressed, {frame.data(), out.pos});
      if (last ? left == 0 : in.pos == in.size) break;
    }
    fed += piece.size();
  };
  feed(prefix, false);
  while (fed < declared) {
    const auto n = std::min<std::uint64_t>(zeros.size(), declared - fed);
    feed(xfer::Bytes(zeros).first(static_cast<std::size_t>(n)), fed + n == declared);
  }
  ZSTD_freeCCtx(cctx);

  fmt::RecordHeader r;
  r.type = fmt::RecordType::index;
  r.codec = xfer::ChunkCodec::zstd;
  r.raw_size = static_cast<std::uint32_t>(declared);
  r.stored_size = static_cast<std::uint32_t>(compressed.size());
  r.payload_check = fmt::payload_check(compressed);
  const auto head = fmt::encode_record_header(r);
  bytes.append(reinterpret_cast<const char*>(head.data()), head.size());
  bytes.append(reinterpret_cast<const char*>(compressed.data()), compressed.size());
  const auto trailer = fmt::encode_trailer({t.index_offset, head.size() + compressed.size()});
  bytes.append(reinterpret_cast<const char*>(trailer.data()), trailer.size());
  nubo_test::write_file(archive, bytes);
}

}  // namespace

TEST_CASE("a bundled size that wraps past 2^64 is refused by every reader") {
  TempDir dir;
  // b at 16 with 2^64 - 8 bytes: 16 + size wraps to 8, which "fits" a bundle and "ends" where
  // the crafted entry table starts. Its content would be a span far past the bundle.
  craft_bundle(dir / "wrap.nubo", k2to64minus(8), 8);
  expect_every_reader_refuses(dir, dir / "wrap.nubo", "beyond the largest file");
  // 2^64 - 1: the size std::span reads as "to the end of the bundle".
  craft_bundle(dir / "dynamic.nubo", k2to64minus(1), 15);
  expect_every_reader_refuses(dir, dir / "dynamic.nubo", "beyond the largest file");
}

TEST_CASE("a bundled file larger than its bundle is refused, whatever the sum") {
  TempDir dir;
  // 2^62 bytes: no wrap in 64 bits, but far past the bundle's raw bytes.
  craft_bundle(dir / "big.nubo", 1ull << 62, 8);
  expect_every_reader_refuses(dir, dir / "big.nubo", "'b': its bundle's sizes or offset");
}

TEST_CASE("a file whose chunk count would wrap is refused") {
  TempDir dir;
  // A file of 2^64 - 16 bytes with no chunk at all: (size + chunk - 1) / chunk wrapped to 0.
  auto w = xfer::ArchiveWriter::create(xfer::open_write(dir / "huge.nubo"), 4096);
  auto e = w.add_entry(file_meta("b", k2to64minus(16)));
  w.end_file(e, xfer::hash128({}));
  w.finish();
  expect_every_reader_refuses(dir, dir / "huge.nubo", "beyond the largest file");
  // The largest size a file can have is read, and its chunk list must then match it.
  auto w2 = xfer::ArchiveWriter::create(xfer::open_write(dir / "max.nubo"), 4096);
  auto e2 = w2.add_entry(file_meta("b", fmt::kMaxFileSize));
  w2.end_file(e2, xfer::hash128({}));
  w2.finish();
  expect_every_reader_refuses(dir, dir / "max.nubo", "chunk list does not match its size");
  CHECK(fmt::chunks_for(fmt::kMaxFileSize, 4096) == (1ull << 51));
  CHECK(fmt::chunks_for(~std::uint64_t{0}, 4 << 20) == (1ull << 42));
}

TEST_CASE("records the index lists must follow each other without overlapping") {
  TempDir dir;
  fmt::Index idx;
  fmt::IndexEntry e;
  e.meta = file_meta("a/b.bin", 10000);
  e.record_offset = 64;
  e.chunk_count = 3;
  idx.entries.push_back(e);
  for (std::uint64_t i = 0; i < 3; ++i) {
    fmt::IndexChunk c;
    c.record_offset = 200 + 100 * i;
    c.raw_size = i < 2 ? 4096 : 10000 - 8192;
    c.stored_size = 10;
    c.codec = xfer::ChunkCodec::zstd;
    idx.chunks.push_back(c);
  }
  CHECK_NOTHROW(fmt::decode_index(fmt::encode_index(idx), fmt::kVersionMajor, 4096, 64, 100000));
  idx.chunks[1].record_offset = 230;  // inside chunk 0's record
  CHECK_THROWS_WITH(fmt::decode_index(fmt::encode_index(idx), fmt::kVersionMajor, 4096, 64, 100000),
                    Catch::Contains("chunk 1: sizes or offset out of range"));
  idx.chunks[1].record_offset = 300;
  // The end record after the last chunk must fit before the index.
  CHECK_THROWS_WITH(fmt::decode_index(fmt::encode_index(idx), fmt::kVersionMajor, 4096, 64, 460),
                    Catch::Contains("extend past the data"));
  // More chunks than the data region has room for record headers.
  CHECK_THROWS_WITH(fmt::decode_index(fmt::encode_index(idx), fmt::kVersionMajor, 4096, 64, 150),
                    Catch::Contains("cannot fit in the 86 bytes of data"));
}

TEST_CASE("a bundle of no bytes is refused (listing divided by its size)") {
  // Found by fuzz:archive_structure: list() estimates a bundled file's stored size in
  // proportion to its bundle's raw size, which nothing kept from being 0 (SIGFPE).
  fmt::Index idx;
  fmt::IndexEntry e;
  e.meta = file_meta("empty", 0);
  e.record_offset = 64;
  e.bundled = true;
  idx.entries.push_back(e);
  fmt::IndexChunk c;
  c.record_offset = 64;
  c.bundle = true;
  c.raw_size = 0;
  idx.chunks.push_back(c);
  CHECK_THROWS_WITH(fmt::decode_index(fmt::encode_index(idx), fmt::kVersionMajor, 4096, 64, 1000),
                    Catch::Contains("'empty': its bundle's sizes or offset are out of range"));
  idx.chunks[0].raw_size = 40;
  CHECK_NOTHROW(fmt::decode_index(fmt::encode_index(idx), fmt::kVersionMajor, 4096, 64, 1000));
}

TEST_CASE("a compressed index that declares a gigabyte is refused before it is decoded") {
  TempDir dir;
  nubo_test::write_file(dir / "src/a", "hello");
  nubo_test::write_file(dir / "src/d/b", std::string(10000, 'b'));
  xfer::pack({dir / "src"}, dir / "a.nubo", {.chunk_size = 4096, .threads = 1, .sync = false});
  // 1. The archive's real index, then a gigabyte of zeros: "trailing bytes" once the real one
  //    is read, not after a gigabyte was allocated and decoded.
  std::vector<std::byte> real;
  {
    auto bytes = nubo_test::read_file(dir / "a.nubo");
    std::array<std::byte, fmt::kTrailerSize> tail{};
    std::memcpy(tail.data(), bytes.data() + bytes.size() - tail.size(), tail.size());
    const auto t = fmt::decode_trailer(tail);
    std::array<std::byte, fmt::kRecordHeaderSize> rh{};
    std::memcpy(rh.data(), bytes.data() + t.index_offset, rh.size());
    const auto r = fmt::decode_record_header(rh, 4096);
    const xfer::Bytes stored(
        reinterpret_cast<const std::byte*>(bytes.data()) + t.index_offset + rh.size(),
        r.stored_size);
    real.resize(r.raw_size);
    xfer::Decompressor().decompress(r.codec, stored, real);
  }
  const std::uint64_t gib = 1ull << 30;
  auto copy = [&](const std::string& name) {
    nubo_test::write_file(dir / name, nubo_test::read_file(dir / "a.nubo"));
    return dir / name;
  };
  const auto trailing = copy("trailing.nubo");
  replace_index(trailing, real, gib);
  CHECK_THROWS_WITH(xfer::list(trailing), Catch::Contains("index: trailing bytes"));
  CHECK(peak_growth([&] { xfer::list(trailing); }) < (64u << 20));

  // 2. Counts that fill the gigabyte, then zeros: the first entry is refused.
  std::vector<std::byte> counts;
  xfer::ByteWriter w(counts);
  w.put<std::uint64_t>(gib / 100);
  w.put<std::uint64_t>(0);
  const auto zeros = copy("zeros.nubo");
  replace_index(zeros, counts, gib);
  CHECK_THROWS_WITH(xfer::list(zeros), Catch::Contains("path length 0"));
  CHECK(peak_growth([&] { xfer::list(zeros); }) < (64u << 20));
  CHECK_THROWS_WITH(xfer::verify(zeros, {.threads = 1}), Catch::Contains("path length 0"));

  // 3. A frame that asks for a 32 MiB window, which a decoder would hold while it reads.
  const auto window = copy("window.nubo");
  replace_index(window, real, 64u << 20, 25);
  CHECK_THROWS_WITH(xfer::list(window), Catch::Contains("zstd"));
}
