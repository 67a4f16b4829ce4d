// pack -> verify -> unpack gives back the same tree, across codecs and chunk sizes, for the
// shapes of data that break naive implementations.
#include <fcntl.h>
#include <sys/stat.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <thread>

#include "helpers.hpp"
#include "nubo/error.hpp"
#include "nubo/transfer.hpp"

namespace xfer = nubo::transfer;
using nubo_test::TempDir;

namespace {

constexpr std::uint64_t kChunk = 64 << 10;

// A tree with every awkward case, sized around `chunk`.
void make_tree(const std::string& root, std::uint64_t chunk) {
  using namespace nubo_test;
  write_file(root + "/empty", "");
  write_file(root + "/one byte", "x");
  write_file(root + "/exactly one chunk", random_bytes(chunk, 1));
  write_file(root + "/one chunk plus one", text_bytes(chunk + 1, 2));
  write_file(root + "/random.bin", random_bytes(3 * chunk + 17, 3));
  write_file(root + "/text.txt", text_bytes(5 * chunk + 5, 4));
  write_file(root + "/zeros", std::string(4 * chunk, '\0'));
  write_file(root + "/ünïcödé ñame/日本語 file.txt", "utf-8 names");
  write_file(root + "/dir with spaces/nested/deeper/leaf", text_bytes(1000, 5));
  make_dirs(root + "/empty dir");
  for (int i = 0; i < 200; ++i) {
    write_file(root + "/many/f" + std::to_string(i),
               text_bytes(static_cast<std::size_t>(i * 37), 6 + static_cast<std::uint64_t>(i)));
  }
  REQUIRE(::symlink("text.txt", (root + "/link to text").c_str()) == 0);
  REQUIRE(::symlink("../text.txt", (root + "/many/up link").c_str()) == 0);
  REQUIRE(::symlink("missing target", (root + "/dangling").c_str()) == 0);
  REQUIRE(::chmod((root + "/random.bin").c_str(), 0600) == 0);
  REQUIRE(::chmod((root + "/text.txt").c_str(), 0755) == 0);
  REQUIRE(::chmod((root + "/empty dir").c_str(), 0700) == 0);
}

}  // namespace

TEST_CASE("round trip across codecs and chunk sizes") {
  TempDir dir;
  for (std::uint64_t chunk : {std::uint64_t{4096}, kChunk, std::uint64_t{1} << 20}) {
    auto src = dir / ("src" + std::to_string(chunk));
    make_tree(src, chunk);
    for (auto codec :
         {xfer::Codec::automatic, xfer::Codec::zstd, xfer::Codec::lz4, xfer::Codec::none}) {
      {
        INFO("chunk " << chunk << " codec " << xfer::codec_name(codec));
        auto archive = dir / "a.nubo";
        auto out = dir / "out";
        xfer::PackOptions po;
        po.codec = codec;
        po.chunk_size = chunk;
        po.threads = 3;
        po.sync = false;
        auto s = xfer::pack({src + "/."}, archive, po);
        CHECK(s.files == 209);
        CHECK(s.symlinks == 3);
        CHECK(s.directories == 6);
        if (codec == xfer::Codec::zstd || codec == xfer::Codec::lz4) {
          CHECK(s.bytes_stored < s.bytes);
        }
        CHECK(s.chunks_by_codec[xfer::Codec::zero] >= 1);  // the zeros file
        CHECK_FALSE(nubo_test::read_file(archive).empty());
        CHECK(::access((archive + ".part").c_str(), F_OK) != 0);
        CHECK(::access((archive + ".journal").c_str(), F_OK) != 0);

        auto v = xfer::verify(archive, {.threads = 2});
        CHECK(v.bytes == s.bytes);

        xfer::UnpackOptions uo;
        uo.sync = false;
        auto u = xfer::unpack(archive, out, uo);
        CHECK(u.bytes == s.bytes);
        std::string why;
        CHECK(nubo_test::same_tree(src, out, &why));
        INFO(why);
        REQUIRE(std::system(("rm -rf '" + out + "' '" + archive + "'").c_str()) == 0);
      }
    }
  }
}

TEST_CASE("a source directory is stored under its name, several sources side by side") {
  TempDir dir;
  nubo_test::write_file(dir / "data/a.txt", "A");
  nubo_test::write_file(dir / "other.txt", "B");
  auto archive = dir / "x.nubo";
  xfer::pack({dir / "data/", dir / "other.txt"}, archive, {.sync = false});
  auto entries = xfer::list(archive);
  REQUIRE(entries.size() == 3);
  CHECK(entries[0].path == "data");
  CHECK(entries[1].path == "data/a.txt");
  CHECK(entries[2].path == "other.txt");
  CHECK(entries[2].hash.size() == 32);
  CHECK_THROWS_WITH(xfer::pack({dir / "data", dir / "data"}, archive, {}),
                    Catch::Contains("same archive path 'data'"));
  CHECK_THROWS_AS(xfer::pack({dir / "missing"}, archive, {}), nubo::Error);
}

TEST_CASE("packing a directory that holds the archive leaves the archive out") {
  TempDir dir;
  nubo_test::write_file(dir / "a.txt", "hello");
  xfer::pack({dir.path() + "/."}, dir / "self.nubo", {.sync = false});
  auto entries = xfer::list(dir / "self.nubo");
  REQUIRE(entries.size() == 1);
  CHECK(entries[0].path == "a.txt");
}

TEST_CASE("a sparse multi-GB file packs to almost nothing and unpacks sparse") {
  TempDir dir;
  auto big = dir / "src/sparse.img";
  nubo_test::make_dirs(dir / "src");
  {
    int fd = ::open(big.c_str(), O_CREAT | O_WRONLY, 0644);
    REQUIRE(fd >= 0);
    REQUIRE(::ftruncate(fd, 3ll << 30) == 0);
    // Some data in the middle and at the very end.
    REQUIRE(::pwrite(fd, "middle", 6, 1ll << 30) == 6);
    REQUIRE(::pwrite(fd, "end", 3, (3ll << 30) - 3) == 3);
    ::close(fd);
  }
  auto archive = dir / "s.nubo";
  auto s = xfer::pack({dir / "src"}, archive, {.sync = false});
  CHECK(s.bytes == 3ull << 30);
  CHECK(s.bytes_stored < (1 << 20));
  CHECK(s.chunks_by_codec[xfer::Codec::zero] >= 760);

  xfer::Reader reader(archive);
  auto mid = reader.read("src/sparse.img", 1ull << 30, 6);
  CHECK(std::string(reinterpret_cast<const char*>(mid.data()), mid.size()) == "middle");
  auto tail = reader.read("src/sparse.img", (3ull << 30) - 3, 100);
  CHECK(std::string(reinterpret_cast<const char*>(tail.data()), tail.size()) == "end");

  auto out = dir / "out";
  xfer::unpack(archive, out, {.sync = false});
  struct stat st {};
  REQUIRE(::stat((out + "/src/sparse.img").c_str(), &st) == 0);
  CHECK(st.st_size == (3ll << 30));
  CHECK(st.st_blocks * 512 < (64ll << 20));  // still sparse
  int fd = ::open((out + "/src/sparse.img").c_str(), O_RDONLY);
  char buf[8] = {};
  CHECK(::pread(fd, buf, 6, 1ll << 30) == 6);
  CHECK(std::string(buf, 6) == "middle");
  ::close(fd);
}

TEST_CASE("Reader reads any byte range, across chunk boundaries, and refuses non-files") {
  TempDir dir;
  auto content = nubo_test::text_bytes(300000, 11);
  nubo_test::write_file(dir / "src/f.txt", content);
  REQUIRE(::symlink("f.txt", (dir / "src/l").c_str()) == 0);
  auto archive = dir / "r.nubo";
  xfer::pack({dir / "src"}, archive,
             {.codec = xfer::Codec::zstd, .chunk_size = 4096, .sync = false});
  xfer::Reader r(archive);
  CHECK(r.entries().size() == 3);
  REQUIRE(r.find("src/f.txt"));
  CHECK(r.find("src/f.txt")->size == content.size());
  CHECK(r.find("nope") == nullptr);
  for (auto [off, len] : {std::pair<std::uint64_t, std::size_t>{0, 10},
                          {4090, 20},
                          {100000, 50000},
                          {299990, 100},
                          {300000, 5},
                          {0, 300000}}) {
    auto got = r.read("src/f.txt", off, len);
    auto want = off >= content.size() ? std::string() : content.substr(off, len);
    CHECK(std::string(reinterpret_cast<const char*>(got.data()), got.size()) == want);
  }
  CHECK_THROWS_AS(r.read("src/l", 0, 10), nubo::Error);
  CHECK_THROWS_AS(r.read("missing", 0, 10), nubo::Error);
  // A huge request is bounded by the file, not allocated.
  CHECK(r.read("src/f.txt", 0, SIZE_MAX).size() == content.size());
}

TEST_CASE("bad options are refused with a message naming them") {
  TempDir dir;
  nubo_test::write_file(dir / "f", "x");
  auto a = dir / "o.nubo";
  CHECK_THROWS_WITH(xfer::pack({dir / "f"}, a, {.chunk_size = 100}), Catch::Contains("chunk size"));
  CHECK_THROWS_WITH(xfer::pack({dir / "f"}, a, {.threads = -1}), Catch::Contains("threads"));
  CHECK_THROWS_WITH(xfer::pack({dir / "f"}, a, {.memory_limit = 1 << 20}),
                    Catch::Contains("memory limit"));
  CHECK_THROWS_WITH(xfer::pack({dir / "f"}, a, {.codec = xfer::Codec::zstd, .level = 40}),
                    Catch::Contains("zstd level 40"));
  CHECK_THROWS_WITH(xfer::pack({}, a, {}), Catch::Contains("no source"));
  CHECK_THROWS_WITH(xfer::parse_codec("gzip"), Catch::Contains("auto, zstd, lz4, float or none"));
}

TEST_CASE("the default pack compresses with zstd and gives the same archive on a busy machine") {
  TempDir dir;
  make_tree(dir / "src", kChunk);
  xfer::PackOptions o;
  o.chunk_size = kChunk;
  CHECK(o.codec == xfer::Codec::zstd);
  auto idle = xfer::pack({dir / "src"}, dir / "idle.nubo", o);
  // Both cores busy with something else while the second pack runs.
  std::atomic<bool> stop{false};
  std::vector<std::thread> load;
  for (int i = 0; i < 2; ++i)
    load.emplace_back([&] {
      volatile std::uint64_t x = 0;
      while (!stop) x = x * 6364136223846793005ull + 1;
    });
  auto busy = xfer::pack({dir / "src"}, dir / "busy.nubo", o);
  stop = true;
  for (auto& t : load) t.join();
  CHECK(busy.bytes_stored == idle.bytes_stored);
  CHECK(busy.chunks_by_codec[xfer::Codec::zstd] == idle.chunks_by_codec[xfer::Codec::zstd]);
  CHECK(idle.chunks_by_codec[xfer::Codec::zstd] > 0);
  CHECK(idle.bytes_stored < idle.bytes);
}
