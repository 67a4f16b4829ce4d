// The real thing: nubo-xfer run as a subprocess and SIGKILLed at random points (seeded), then
// run again with the same arguments until it completes. The archive must be byte-identical to an
// uninterrupted one; the unpacked tree identical to the source; and after every kill, each file
// under its final name must already be complete and correct.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <random>

#include "helpers.hpp"
#include "nubo/transfer.hpp"

namespace xfer = nubo::transfer;
using nubo_test::TempDir;
using Clock = std::chrono::steady_clock;

namespace {

// Runs nubo-xfer with `args`; SIGKILLs it after `kill_after` unless it finished first.
nubo_test::KilledRun run_xfer(const std::vector<std::string>& args,
                              std::chrono::microseconds kill_after, const std::string& log) {
  std::vector<std::string> all = {NUBO_XFER_BIN};
  all.insert(all.end(), args.begin(), args.end());
  return nubo_test::run_killed(all, kill_after, log, log, true);
}

void make_source(const std::string& root) {
  nubo_test::write_file(root + "/a/text1.txt", nubo_test::text_bytes(5 << 20, 41));
  nubo_test::write_file(root + "/a/random.bin", nubo_test::random_bytes(2 << 20, 42));
  nubo_test::write_file(root + "/b/text2.txt", nubo_test::text_bytes(3 << 20, 43));
  for (int i = 0; i < 60; ++i) {
    nubo_test::write_file(root + "/c/small" + std::to_string(i),
                          nubo_test::text_bytes(20000, 50 + static_cast<std::uint64_t>(i)));
  }
}

}  // namespace

TEST_CASE("pack and unpack killed with SIGKILL at random points resume to identical results") {
  TempDir dir;
  make_source(dir / "src");
  auto log = dir / "log";
  // Slow enough to be killed in the middle: strong compression on one thread. -f: a kill may
  // land after the archive took its name, and the same command must then still succeed.
  std::vector<std::string> pack_args = {"pack",         dir / "src", "-o",        dir / "a.nubo",
                                        "--codec",      "zstd",      "--level",   "12",
                                        "--chunk-size", "128K",      "--threads", "1",
                                        "--memory",     "2M",        "--quiet",   "-f"};
  auto ref_args = pack_args;
  ref_args[3] = dir / "ref.nubo";
  auto t0 = Clock::now();
  REQUIRE(run_xfer(ref_args, std::chrono::minutes(2), log).exit_code == 0);
  auto pack_time = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - t0);
  auto reference = nubo_test::read_file(dir / "ref.nubo");

  std::mt19937_64 rng(20261129);
  int kills = 0;
  for (int iteration = 0; iteration < 3; ++iteration) {
    ::unlink((dir / "a.nubo").c_str());
    for (int attempt = 0;; ++attempt) {
      REQUIRE(attempt < 12);
      // A random point in the first 80% of a full run; the last attempts run to the end.
      auto delay = attempt < 8 ? std::chrono::microseconds(rng() % (pack_time.count() * 8 / 10 + 1))
                               : std::chrono::minutes(2);
      auto r = run_xfer(pack_args, delay, log);
      if (r.killed) {
        ++kills;
        continue;
      }
      REQUIRE(r.exit_code == 0);
      break;
    }
    INFO("iteration " << iteration);
    REQUIRE(nubo_test::read_file(dir / "a.nubo") == reference);
  }

  // Unpack: sync on (an fdatasync per file), one thread, so that kills land mid-way.
  std::vector<std::string> unpack_args = {
      "unpack", dir / "ref.nubo", "-C", dir / "out", "--threads", "1", "--memory", "2M", "--quiet"};
  t0 = Clock::now();
  REQUIRE(run_xfer({"unpack", dir / "ref.nubo", "-C", dir / "out0", "--threads", "1", "--quiet"},
                   std::chrono::minutes(2), log)
              .exit_code == 0);
  auto unpack_time = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - t0);
  for (int iteration = 0; iteration < 3; ++iteration) {
    REQUIRE(std::system(("rm -rf '" + dir / "out" + "'").c_str()) == 0);
    for (int attempt = 0;; ++attempt) {
      REQUIRE(attempt < 12);
      auto delay = attempt < 8
                       ? std::chrono::microseconds(rng() % (unpack_time.count() * 8 / 10 + 1))
                       : std::chrono::minutes(2);
      auto r = run_xfer(unpack_args, delay, log);
      if (::access((dir / "out").c_str(), F_OK) == 0) {
        REQUIRE(nubo_test::first_wrong_file(dir / "out", dir.path()).empty());
      }
      if (r.killed) {
        ++kills;
        continue;
      }
      REQUIRE(r.exit_code == 0);
      break;
    }
    std::string why;
    CHECK(nubo_test::same_tree(dir / "src", dir / "out/src", &why));
    INFO(why);
  }
  WARN("SIGKILLed " << kills << " times; a full pack took " << pack_time.count() / 1000
                    << " ms, a full unpack " << unpack_time.count() / 1000 << " ms");
  CHECK(kills > 0);
}
