// nubo-xfer against a real S3-compatible server on loopback (run by with_s3_server.py),
// SIGKILLed at random points (seeded) and run again with the same arguments until it completes:
//  - pack -o s3://: no object under the name until the end, then one byte-identical to the same
//    pack made locally; the rerun sends only what the server did not hold (the --json summary's
//    bytes against the parts it found, which it logs);
//  - unpack s3://: every file under its final name complete and correct after every kill, and
//    the tree identical at the end;
//  - cp of a file up and down: the object, or the file, under its name only once whole.
#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <random>
#include <regex>

#include "../../helpers.hpp"
#include "scoped_env.hpp"
#include "transfer/store/s3/client.hpp"
#include "transfer/store/s3/config.hpp"

namespace s3 = nubo::s3;
using nubo_test::TempDir;
using Clock = std::chrono::steady_clock;

namespace {

std::uint64_t json_number(const std::string& json, const std::string& field) {
  std::smatch m;
  REQUIRE(std::regex_search(json, m, std::regex("\"" + field + "\": ([0-9]+)")));
  return std::stoull(m[1]);
}

// The bytes the last "resuming the upload" line of `log` says the server held; 0 without one.
std::uint64_t bytes_held(const std::string& log) {
  static const std::regex line("parts \\(([0-9]+) bytes\\) are on the server");
  std::uint64_t held = 0;
  for (auto it = std::sregex_iterator(log.begin(), log.end(), line); it != std::sregex_iterator();
       ++it)
    held = std::stoull((*it)[1]);
  return held;
}

// Runs `args(attempt)` again and again, SIGKILLed at a random point of `full` until `kills`
// kills are done, then to the end; `after_kill` checks what a kill left. False: it failed.
// `full` shrinks to the shortest whole run seen: the first run of a command is often the
// slowest (cold caches, a sanitizer's first passes), and kills drawn past the end of the later
// ones would kill nothing.
template <typename Args, typename AfterKill>
bool run_until_done(const Args& args, std::chrono::microseconds& full, std::mt19937_64& rng,
                    int& kills, const std::string& json, const std::string& log,
                    const AfterKill& after_kill) {
  for (int attempt = 0; attempt < 12; ++attempt) {
    const auto delay = attempt < 5 ? std::chrono::microseconds(rng() % (full.count() + 1))
                                   : std::chrono::microseconds(std::chrono::minutes(2));
    ::truncate(log.c_str(), 0);
    const auto started = Clock::now();
    const auto r = nubo_test::run_killed(args(), delay, json, log, false);
    if (!r.killed) {
      if (attempt == 0)  // a whole run from scratch, not the rest of a killed one
        full = std::min(
            full, std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - started));
      return r.exit_code == 0;
    }
    ++kills;
    after_kill();
  }
  return false;
}

std::chrono::microseconds since(Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - t);
}

}  // namespace

TEST_CASE(
    "pack to and unpack from a bucket, SIGKILLed at random points, resume to identical "
    "results") {
  REQUIRE(std::getenv("NUBO_S3_TEST_SERVER"));  // never a real endpoint
  TempDir dir;
  nubo_test::ScopedEnv log_level("NUBO_LOG", "info");
  nubo_test::ScopedEnv cache("XDG_CACHE_HOME", (dir / "cache").c_str());
  // About 40 MiB of archive: five parts of 8 MiB, so that kills land between parts too.
  for (int i = 0; i < 3; ++i)
    nubo_test::write_file(dir / ("src/big" + std::to_string(i) + ".bin"),
                          nubo_test::random_bytes(11 << 20, 70 + static_cast<std::uint64_t>(i)));
  nubo_test::write_file(dir / "src/text.txt", nubo_test::text_bytes(8 << 20, 80));
  for (int i = 0; i < 40; ++i)
    nubo_test::write_file(dir / ("src/small/" + std::to_string(i)),
                          nubo_test::text_bytes(30000, 90 + static_cast<std::uint64_t>(i)));
  s3::Client client(s3::load_config());
  const std::string bucket = "nubo-kill-" + std::to_string(::getpid());
  client.create_bucket(bucket);
  const auto log = dir / "log", json = dir / "summary.json";
  auto xfer = [](std::vector<std::string> args) {
    args.insert(args.begin(), NUBO_XFER_BIN);
    return args;
  };
  auto pack_args = [&](const std::string& to) {
    return xfer({"pack", dir / "src", "-o", to, "--level", "6", "--chunk-size", "1M", "--threads",
                 "1", "--quiet", "--json"});
  };

  auto t0 = Clock::now();
  REQUIRE(
      nubo_test::run_killed(pack_args(dir / "ref.nubo"), std::chrono::minutes(2), json, log, false)
          .exit_code == 0);
  const auto local_time = since(t0);
  const auto reference = nubo_test::read_file(dir / "ref.nubo");
  // Kills land at random points of a whole upload, which takes longer than packing to a local
  // file, the more so under a sanitizer: time one, so that kills also land after parts are held.
  t0 = Clock::now();
  REQUIRE(nubo_test::run_killed(pack_args(s3::ObjectUrl{bucket, "archives/timed.nubo"}.text()),
                                std::chrono::minutes(2), json, log, false)
              .exit_code == 0);
  auto pack_time = std::max(local_time, since(t0));

  std::mt19937_64 rng(20261203);
  int pack_kills = 0, unpack_kills = 0, resumed = 0;
  std::uint64_t bytes_not_sent_again = 0;
  // Until at least 10 kills each, 3 complete runs, and a rerun that found parts on the server.
  for (int iteration = 0; iteration < 3 || pack_kills < 10 || resumed == 0; ++iteration) {
    REQUIRE(iteration < 10);
    INFO("pack iteration " << iteration);
    const s3::ObjectUrl url{bucket, "archives/a" + std::to_string(iteration) + ".nubo"};
    const bool done =
        run_until_done([&] { return pack_args(url.text()); }, pack_time, rng, pack_kills, json, log,
                       [&] {
                         // Never a half archive under its name: none, or (killed
                         // once the upload was complete) the whole one.
                         if (const auto info = client.head_object(url))
                           CHECK(client.get_range(url, 0, info->size) == reference);
                       });
    INFO(nubo_test::read_file(log));
    REQUIRE(done);
    const auto summary = nubo_test::read_file(json);
    const auto stored = json_number(summary, "bytes_stored");
    const auto sent = json_number(summary, "bytes_transferred");
    const auto held = bytes_held(nubo_test::read_file(log));
    INFO(summary);
    // What the server held went up once: the rerun sent the rest, and only the rest. Killed
    // once the object was complete, the rerun finds it up to date and sends nothing.
    if (summary.find("\"up_to_date\": true") != std::string::npos)
      CHECK(sent == 0);
    else
      CHECK(sent + held == stored);
    if (held > 0) ++resumed;
    bytes_not_sent_again += held;
    REQUIRE(client.get_range(url, 0, reference.size()) == reference);
  }
  CHECK(nubo_test::tree(dir / "cache/nubo/s3", false).empty());  // no journal left behind

  // Unpack, one thread and an fdatasync per file, so that kills land mid-way.
  const s3::ObjectUrl archive{bucket, "archives/a0.nubo"};
  auto unpack_args = [&](const std::string& to) {
    return xfer({"unpack", archive.text(), "-C", to, "--threads", "1", "--quiet"});
  };
  t0 = Clock::now();
  REQUIRE(
      nubo_test::run_killed(unpack_args(dir / "out0"), std::chrono::minutes(2), json, log, false)
          .exit_code == 0);
  auto unpack_time = since(t0);
  for (int iteration = 0; iteration < 3 || unpack_kills < 10; ++iteration) {
    REQUIRE(iteration < 10);
    INFO("unpack iteration " << iteration);
    const auto out = dir / ("out" + std::to_string(iteration + 1));
    const bool done =
        run_until_done([&] { return unpack_args(out); }, unpack_time, rng, unpack_kills, json, log,
                       [&] {
                         if (::access(out.c_str(), F_OK) == 0)
                           REQUIRE(nubo_test::first_wrong_file(out, dir.path()) == "");
                       });
    INFO(nubo_test::read_file(log));
    REQUIRE(done);
    std::string why;
    CHECK(nubo_test::same_tree(dir / "src", out + "/src", &why));
    INFO(why);
  }
  WARN("SIGKILLed " << pack_kills << " packs and " << unpack_kills << " unpacks; " << resumed
                    << " packs resumed, " << bytes_not_sent_again
                    << " bytes not sent again; a full pack took " << pack_time.count() / 1000
                    << " ms, a full unpack " << unpack_time.count() / 1000 << " ms");
  CHECK(resumed > 0);
}

TEST_CASE(
    "cp of a file to and from a bucket, SIGKILLed at random points, resumes to the same "
    "bytes") {
  REQUIRE(std::getenv("NUBO_S3_TEST_SERVER"));  // never a real endpoint
  TempDir dir;
  nubo_test::ScopedEnv cache("XDG_CACHE_HOME", (dir / "cache").c_str());
  const auto content = nubo_test::random_bytes(40 << 20, 100);
  nubo_test::write_file(dir / "weights.bin", content);
  s3::Client client(s3::load_config());
  const std::string bucket = "nubo-kill-cp-" + std::to_string(::getpid());
  client.create_bucket(bucket);
  const auto log = dir / "log", json = dir / "summary.json";
  auto cp = [&](const std::string& from, const std::string& to) {
    return std::vector<std::string>{NUBO_XFER_BIN, "cp",        from, to,        "--part-size",
                                    "5M",          "--streams", "2",  "--quiet", "--json"};
  };
  auto t0 = Clock::now();
  REQUIRE(nubo_test::run_killed(cp(dir / "weights.bin", "s3://" + bucket + "/ref.bin"),
                                std::chrono::minutes(2), json, log, false)
              .exit_code == 0);
  auto up_time = since(t0);
  std::mt19937_64 rng(20261204);
  int up_kills = 0, down_kills = 0;
  std::uint64_t resumed_bytes = 0;
  for (int iteration = 0; iteration < 3 || up_kills < 10 || resumed_bytes == 0; ++iteration) {
    REQUIRE(iteration < 10);
    INFO("upload iteration " << iteration);
    const s3::ObjectUrl url{bucket, "w" + std::to_string(iteration) + ".bin"};
    const bool done = run_until_done([&] { return cp(dir / "weights.bin", url.text()); }, up_time,
                                     rng, up_kills, json, log,
                                     [&] {
                                       if (const auto info = client.head_object(url))
                                         CHECK(client.get_range(url, 0, info->size) == content);
                                     });
    INFO(nubo_test::read_file(log));
    REQUIRE(done);
    REQUIRE(client.get_range(url, 0, content.size()) == content);
    // The parts the server held were kept; only the others were sent.
    const auto summary = nubo_test::read_file(json);
    INFO(summary);
    CHECK(json_number(summary, "bytes_sent") + json_number(summary, "bytes_resumed") ==
          content.size());
    resumed_bytes += json_number(summary, "bytes_resumed");
  }
  t0 = Clock::now();
  REQUIRE(nubo_test::run_killed(cp("s3://" + bucket + "/ref.bin", dir / "first.bin"),
                                std::chrono::minutes(2), json, log, false)
              .exit_code == 0);
  auto down_time = since(t0);
  for (int iteration = 0; iteration < 3 || down_kills < 10; ++iteration) {
    REQUIRE(iteration < 10);
    INFO("download iteration " << iteration);
    const auto to = dir / ("down" + std::to_string(iteration) + ".bin");
    const bool done = run_until_done([&] { return cp("s3://" + bucket + "/ref.bin", to); },
                                     down_time, rng, down_kills, json, log,
                                     [&] {
                                       // Under its name only once complete and verified.
                                       if (::access(to.c_str(), F_OK) == 0)
                                         REQUIRE(nubo_test::read_file(to) == content);
                                     });
    INFO(nubo_test::read_file(log));
    REQUIRE(done);
    REQUIRE(nubo_test::read_file(to) == content);
  }
  CHECK(resumed_bytes > 0);
  WARN("SIGKILLed " << up_kills << " uploads and " << down_kills << " downloads, " << resumed_bytes
                    << " bytes not sent again; a full upload took " << up_time.count() / 1000
                    << " ms, a full download " << down_time.count() / 1000 << " ms");
}
