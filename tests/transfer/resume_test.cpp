// Resume in-process: a pack or unpack cancelled (or cut short, as a crash would leave it) and run
// again gives exactly what an uninterrupted run gives, and skips what was already done.
#include <catch2/catch.hpp>

#include "helpers.hpp"
#include "nubo/error.hpp"
#include "nubo/transfer.hpp"
#include "transfer/pipeline/progress.hpp"

namespace xfer = nubo::transfer;
using nubo_test::TempDir;

namespace {

void make_source(const std::string& root) {
  nubo_test::write_file(root + "/big.txt", nubo_test::text_bytes(3 << 20, 21));
  nubo_test::write_file(root + "/big.bin", nubo_test::random_bytes(2 << 20, 22));
  for (int i = 0; i < 30; ++i) {
    nubo_test::write_file(root + "/small/" + std::to_string(i),
                          nubo_test::text_bytes(5000, 23 + static_cast<std::uint64_t>(i)));
  }
}

// Cancels once `limit` bytes are done. The callback runs after every job (no 100 ms interval),
// so the point of cancellation depends on the bytes alone.
xfer::ProgressFn cancel_after(std::uint64_t limit) {
  xfer::ProgressTracker::set_interval_for_testing(std::chrono::milliseconds(0));
  return [limit](const xfer::Progress& p) { return p.bytes_done < limit; };
}

}  // namespace

TEST_CASE("a cancelled pack resumes and gives the same archive as an uninterrupted one") {
  TempDir dir;
  make_source(dir / "src");
  xfer::PackOptions base;
  base.codec = xfer::Codec::zstd;  // a fixed codec makes the archive's bytes deterministic
  base.chunk_size = 64 << 10;
  base.memory_limit = 1 << 20;
  base.sync = false;
  auto reference = dir / "ref.nubo";
  xfer::pack({dir / "src"}, reference, base);

  auto archive = dir / "a.nubo";
  std::uint64_t cut = 700 << 10;
  for (int attempt = 0; attempt < 20; ++attempt) {
    auto o = base;
    o.progress = cancel_after(cut);
    try {
      auto s = xfer::pack({dir / "src"}, archive, o);
      CHECK(s.resumed);
      CHECK(s.bytes_skipped > 0);
      break;
    } catch (const nubo::Error& e) {
      REQUIRE(e.code() == nubo::Errc::cancelled);
      CHECK(::access((archive + ".part").c_str(), F_OK) == 0);
    }
    cut += 1 << 20;
  }
  CHECK(nubo_test::read_file(archive) == nubo_test::read_file(reference));
}

TEST_CASE("pack resumes from a partial archive cut at any point, as a crash leaves it") {
  TempDir dir;
  make_source(dir / "src");
  xfer::PackOptions o;
  o.codec = xfer::Codec::lz4;
  o.chunk_size = 64 << 10;
  o.memory_limit = 1 << 20;
  o.sync = false;
  auto reference = dir / "ref.nubo";
  xfer::pack({dir / "src"}, reference, o);
  auto full = nubo_test::read_file(reference);
  auto archive = dir / "a.nubo";
  // No journal at all (killed before the first checkpoint): everything is verified from the
  // header on. Cut points inside headers, payloads and the index.
  for (std::size_t cut : {std::size_t{10}, std::size_t{64}, std::size_t{100}, full.size() / 3,
                          full.size() / 2 + 7, full.size() - 40, full.size() - 1}) {
    INFO("cut at " << cut);
    nubo_test::write_file(archive + ".part", full.substr(0, cut));
    auto s = xfer::pack({dir / "src"}, archive, o);
    CHECK(nubo_test::read_file(archive) == full);
    if (cut > full.size() / 3) CHECK(s.bytes_skipped > 0);
  }
  // Garbage in the middle of the partial: kept only up to the damage.
  auto damaged = full.substr(0, full.size() - 100);
  damaged[full.size() / 2] ^= 0x40;
  nubo_test::write_file(archive + ".part", damaged);
  xfer::pack({dir / "src"}, archive, o);
  CHECK(nubo_test::read_file(archive) == full);
}

TEST_CASE("a source changed since the interrupted pack is packed again, with its new content") {
  TempDir dir;
  make_source(dir / "src");
  xfer::PackOptions o;
  o.codec = xfer::Codec::zstd;
  o.chunk_size = 64 << 10;
  o.memory_limit = 1 << 20;
  o.sync = false;
  o.progress = cancel_after(4 << 20);
  auto archive = dir / "a.nubo";
  CHECK_THROWS_AS(xfer::pack({dir / "src"}, archive, o), nubo::Error);
  // big.bin was packed (entries are in name order); change it.
  nubo_test::write_file(dir / "src/big.bin", nubo_test::random_bytes(2 << 20, 99));
  o.progress = nullptr;
  xfer::pack({dir / "src"}, archive, o);
  xfer::verify(archive);
  xfer::unpack(archive, dir / "out", {.sync = false});
  CHECK(nubo_test::read_file(dir / "out/src/big.bin") == nubo_test::read_file(dir / "src/big.bin"));
  std::string why;
  CHECK(nubo_test::same_tree(dir / "src", dir / "out/src", &why));
  INFO(why);
}

TEST_CASE("a cancelled unpack resumes, keeps verified files and never shows a partial file") {
  TempDir dir;
  make_source(dir / "src");
  auto archive = dir / "a.nubo";
  xfer::pack({dir / "src"}, archive,
             {.codec = xfer::Codec::zstd, .chunk_size = 64 << 10, .sync = false});
  auto out = dir / "out";
  std::uint64_t cut = 300 << 10;
  int interrupted = 0;
  for (int attempt = 0; attempt < 30; ++attempt) {
    xfer::UnpackOptions uo;
    uo.memory_limit = 1 << 20;
    uo.sync = false;
    uo.progress = cancel_after(cut);
    try {
      auto s = xfer::unpack(archive, out, uo);
      if (interrupted > 0) CHECK(s.bytes_skipped > 0);
      break;
    } catch (const nubo::Error& e) {
      REQUIRE(e.code() == nubo::Errc::cancelled);
      ++interrupted;
      // Every file under its final name is complete.
      for (const auto& line : nubo_test::tree(out, false)) {
        if (line[0] != 'f' || line.find(".nubo-part") != std::string::npos ||
            line.find(".journal") != std::string::npos) {
          continue;
        }
        auto rel = line.substr(line.find(' ', line.find(' ', 2) + 1) + 1);
        CHECK(nubo_test::read_file(out + "/" + rel) == nubo_test::read_file(dir / rel));
      }
    }
    cut += 400 << 10;
  }
  CHECK(interrupted > 2);
  std::string why;
  CHECK(nubo_test::same_tree(dir / "src", out + "/src", &why));
  INFO(why);
  // No temporary file or journal is left behind.
  for (const auto& line : nubo_test::tree(out, false)) {
    CHECK(line.find(".nubo-part") == std::string::npos);
    CHECK(line.find(".journal") == std::string::npos);
  }
  // Run again: everything is up to date and skipped.
  auto again = xfer::unpack(archive, out, {.sync = false});
  CHECK(again.bytes_skipped == again.bytes);
}

TEST_CASE("unpack trusts no byte of a temporary file that does not match the archive") {
  TempDir dir;
  make_source(dir / "src");
  auto archive = dir / "a.nubo";
  xfer::pack({dir / "src"}, archive,
             {.codec = xfer::Codec::lz4, .chunk_size = 64 << 10, .sync = false});
  // A temporary file with the right prefix, then garbage: only the prefix is kept.
  auto good = nubo_test::read_file(dir / "src/big.txt");
  nubo_test::write_file(dir / "out/src/.big.txt.nubo-part",
                        good.substr(0, 200000) + std::string(100000, 'Z'));
  // An existing final file with other content is replaced.
  nubo_test::write_file(dir / "out/src/big.bin", "not the archive's content");
  auto s = xfer::unpack(archive, dir / "out", {.sync = false});
  CHECK(s.bytes_skipped == 3 * (64 << 10));  // the 3 whole chunks of the good prefix
  std::string why;
  CHECK(nubo_test::same_tree(dir / "src", dir / "out/src", &why));
  INFO(why);
}
