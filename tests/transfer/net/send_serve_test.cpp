// send and serve on loopback: round trips across codecs, stream counts and shapes (one file,
// many small files, a multi-GB sparse file), skipping what is already there, and resuming a
// cancelled send so that only what was not verified is sent again.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "net_helpers.hpp"
#include "transfer/pipeline/progress.hpp"

namespace net = nubo::net;
namespace xfer = nubo::transfer;
using nubo_test::TempDir;

namespace {

void make_small_files(const std::string& dir, int n) {
  for (int i = 0; i < n; ++i)
    nubo_test::write_file(dir + "/d" + std::to_string(i % 7) + "/f" + std::to_string(i),
                          nubo_test::text_bytes(static_cast<std::size_t>(i * 37 % 5000),
                                                static_cast<std::uint64_t>(i)));
  nubo_test::write_file(dir + "/empty", "");
  REQUIRE(::symlink("d0/f0", (dir + "/link").c_str()) == 0);
}

bool exists(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

}  // namespace

TEST_CASE("send and serve round trip across codecs and stream counts", "[net]") {
  TempDir t;
  nubo_test::write_file(t / "one/big",
                        nubo_test::text_bytes(3 << 20, 1) + nubo_test::random_bytes(1 << 20, 2));
  make_small_files(t / "many", 300);
  net::Server server(nubo_test::serve_options(t / "dst"));
  int round = 0;
  for (auto codec :
       {xfer::Codec::automatic, xfer::Codec::zstd, xfer::Codec::lz4, xfer::Codec::none}) {
    for (int streams : {1, 3}) {
      std::string sub = "r";  // built with += (GCC 12 misreads "r" + to_string: -Wrestrict)
      sub += std::to_string(round++);
      auto o = nubo_test::send_options(streams);
      o.codec = codec;
      o.chunk_size = 256 << 10;
      auto s = net::send({t / "one", t / "many"}, nubo_test::dest_of(server, sub), o);
      std::string why;
      INFO("codec " << xfer::codec_name(codec) << ", " << streams << " streams");
      CHECK(nubo_test::same_tree(t / "one", t / ("dst/" + sub + "/one"), &why));
      CHECK(nubo_test::same_tree(t / "many", t / ("dst/" + sub + "/many"), &why));
      INFO(why);
      CHECK(s.files == 302);
      CHECK(s.bytes_sent == s.bytes);
      CHECK(s.bytes_skipped == 0);
      CHECK(s.wire_bytes > 0);
    }
  }
  CHECK(server.stats().sessions == 8);
}

TEST_CASE("small files travel whole in bundles, with their modes and times", "[net]") {
  TempDir t;
  const std::size_t chunk = 64 << 10;
  make_small_files(t / "src", 400);  // 400 files of up to 5000 bytes, an empty one, a link
  nubo_test::write_file(t / "src/exact", nubo_test::text_bytes(chunk, 1));
  nubo_test::write_file(t / "src/over", nubo_test::text_bytes(chunk + 1, 2));
  nubo_test::write_file(t / "src/script", "#!/bin/sh\n");
  ::chmod((t / "src/script").c_str(), 0755);
  nubo_test::write_file(t / "src/readonly", "keep");
  ::chmod((t / "src/readonly").c_str(), 0400);
  net::Server server(nubo_test::serve_options(t / "dst"));
  for (int streams : {1, 3}) {
    auto o = nubo_test::send_options(streams);
    o.chunk_size = chunk;
    auto sub = "s" + std::to_string(streams);
    auto s = net::send({t / "src"}, nubo_test::dest_of(server, sub), o);
    std::string why;
    CHECK(nubo_test::same_tree(t / "src", t / ("dst/" + sub + "/src"), &why));
    INFO(why);
    CHECK(s.files == 405);
    CHECK(s.bytes_sent == s.bytes);
    // About a chunk's worth of small files per message, and 2 chunks for the file above one.
    auto small = s.bytes - (chunk + 1);
    CHECK(s.chunks_sent <= small / chunk + 2 + 2);
  }
}

TEST_CASE("identical small files cross once and are copied at the receiver", "[net]") {
  TempDir t;
  // Five directories of 30 incompressible small files: 15 of their own, 15 the same in all five
  // (60 copies), and a large file each, sent in chunks between the bundles.
  for (int d = 0; d < 5; ++d) {
    auto dir = t / ("src/d" + std::to_string(d));
    for (int i = 0; i < 30; ++i)
      nubo_test::write_file(dir + "/f" + std::to_string(i),
                            nubo_test::random_bytes(3000, i < 15 ? 100 + 30 * d + i : i));
    nubo_test::write_file(dir + "/zlarge", nubo_test::random_bytes(200 << 10, 7 + d));
  }
  net::Server server(nubo_test::serve_options(t / "dst"));
  for (int streams : {1, 4}) {
    auto o = nubo_test::send_options(streams);
    o.chunk_size = 16 << 10;  // many bundles: most copies name a file of an earlier one
    auto sub = "s" + std::to_string(streams);
    auto s = net::send({t / "src"}, nubo_test::dest_of(server, sub), o);
    std::string why;
    CHECK(nubo_test::same_tree(t / "src", t / ("dst/" + sub + "/src"), &why));
    INFO(why);
    CHECK(s.bytes_sent == s.bytes);
    CHECK(s.bytes_deduplicated == 60 * 3000);
    CHECK(s.wire_bytes < 90 * 3000 + 5 * (205 << 10));
  }
  // Files already there are not sources: with the first copies in place, the others cross in
  // full and still arrive intact.
  for (int i = 0; i < 30; ++i) ::unlink((t / ("dst/s1/src/d4/f" + std::to_string(i))).c_str());
  auto again = net::send({t / "src"}, nubo_test::dest_of(server, "s1"), nubo_test::send_options());
  CHECK(again.bytes_sent == 30 * 3000);
  CHECK(again.bytes_deduplicated == 0);
  CHECK(nubo_test::same_tree(t / "src", t / "dst/s1/src"));
}

TEST_CASE("a second send skips files complete at the destination", "[net]") {
  TempDir t;
  make_small_files(t / "src", 50);
  net::Server server(nubo_test::serve_options(t / "dst"));
  auto first = net::send({t / "src"}, nubo_test::dest_of(server), nubo_test::send_options());
  auto again = net::send({t / "src"}, nubo_test::dest_of(server), nubo_test::send_options());
  CHECK(first.bytes_sent == first.bytes);
  CHECK(again.bytes_skipped == again.bytes);
  CHECK(again.bytes_sent == 0);
  // One file changed: only it is sent.
  nubo_test::write_file(t / "src/d1/f1", "changed content");
  auto third = net::send({t / "src"}, nubo_test::dest_of(server), nubo_test::send_options());
  CHECK(third.bytes_sent == 15);
  CHECK(nubo_test::same_tree(t / "src", t / "dst/src"));
}

TEST_CASE("a multi-GB sparse file crosses as holes", "[net]") {
  TempDir t;
  auto path = t / "sparse/disk.img";
  nubo_test::write_file(path, "");
  {
    auto fd = ::open(path.c_str(), O_WRONLY);
    REQUIRE(fd >= 0);
    auto data = nubo_test::random_bytes(1 << 20, 9);
    for (std::uint64_t at : {0ull, 1ull << 30, (5ull << 29) + 12345})
      REQUIRE(::pwrite(fd, data.data(), data.size(), static_cast<off_t>(at)) ==
              static_cast<ssize_t>(data.size()));
    REQUIRE(::ftruncate(fd, static_cast<off_t>(3ull << 30)) == 0);
    ::close(fd);
  }
  net::Server server(nubo_test::serve_options(t / "dst", 60));
  auto o = nubo_test::send_options(3);
  o.timeout_seconds = 60;
  auto s = net::send({t / "sparse"}, nubo_test::dest_of(server), o);
  CHECK(s.bytes == 3ull << 30);
  CHECK(s.chunks_by_codec[xfer::Codec::zero] > 700);
  CHECK(s.wire_bytes < 16ull << 20);
  CHECK(nubo_test::same_tree(t / "sparse", t / "dst/sparse"));
  struct stat st {};
  REQUIRE(::stat((t / "dst/sparse/disk.img").c_str(), &st) == 0);
  CHECK(static_cast<std::uint64_t>(st.st_blocks) * 512 < (64ull << 20));  // still sparse
}

TEST_CASE("a cancelled send resumes with only what was not verified", "[net]") {
  TempDir t;
  nubo_test::write_file(t / "src/a", nubo_test::random_bytes(8 << 20, 3));
  nubo_test::write_file(t / "src/b", nubo_test::random_bytes(6 << 20, 4));
  net::Server server(nubo_test::serve_options(t / "dst"));
  const int streams = 2;
  const std::uint64_t chunk = 256 << 10;
  auto o = nubo_test::send_options(streams);
  o.chunk_size = chunk;
  o.rate = 16 << 20;  // slow enough that the cancel lands mid-way, with the queue full
  std::uint64_t done_at_cancel = 0;
  o.progress = [&](const net::SendProgress& p) {
    done_at_cancel = p.bytes_done;
    return p.bytes_done < p.bytes_total / 2;
  };
  // A call per chunk, so that the cancel lands at half way exactly.
  xfer::ProgressTracker::set_interval_for_testing(std::chrono::milliseconds(0));
  CHECK_THROWS_MATCHES(net::send({t / "src"}, nubo_test::dest_of(server), o), nubo::Error,
                       Catch::Predicate<nubo::Error>(
                           [](const nubo::Error& e) { return e.code() == nubo::Errc::cancelled; }));
  // Whatever is under its final name is complete.
  if (exists(t / "dst/src/a"))
    CHECK(nubo_test::read_file(t / "dst/src/a") == nubo_test::read_file(t / "src/a"));
  xfer::ProgressTracker::set_interval_for_testing(std::chrono::milliseconds(100));
  auto again_o = nubo_test::send_options(streams);
  again_o.chunk_size = chunk;
  auto again = net::send({t / "src"}, nubo_test::dest_of(server), again_o);
  // What was counted done when it was cancelled was delivered (the queue drains first), so the
  // next send does not repeat it.
  CHECK(again.bytes_resumed + again.bytes_skipped >= done_at_cancel);
  CHECK(again.bytes_sent + again.bytes_resumed + again.bytes_skipped == again.bytes);
  CHECK(nubo_test::same_tree(t / "src", t / "dst/src"));
}

TEST_CASE("a stopped server refuses connections instead of leaving them to stall", "[net]") {
  TempDir t;
  net::Server server(nubo_test::serve_options(t / "dst"));
  const auto port = server.port();
  server.stop();
  CHECK(server.port() == port);  // still readable, as the stats are
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  REQUIRE(fd >= 0);
  sockaddr_in at{};
  at.sin_family = AF_INET;
  at.sin_port = htons(port);
  at.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const int rc = ::connect(fd, reinterpret_cast<sockaddr*>(&at), sizeof at);
  const int error = errno;
  ::close(fd);
  CHECK(rc == -1);
  CHECK(error == ECONNREFUSED);
}
