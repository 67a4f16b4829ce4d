// The rendezvous stores: a folder, the tcp:// store that rank 0 hosts (tokens, hostile clients),
// and a real redis-server started on loopback for the test.
#include <sys/stat.h>

#include <catch2/catch.hpp>

#include "skip.hpp"

#include <filesystem>
#include <thread>
#include <vector>

#include "common/tcp.hpp"
#include "nubo/error.hpp"
#include "parallel/rendezvous/meet.hpp"
#include "parallel/rendezvous/store.hpp"
#include "process_helpers.hpp"

using namespace nubo;
using namespace std::chrono_literals;

namespace {

void exercise(parallel::Store& store) {
  CHECK_FALSE(store.try_get("a/b").has_value());
  store.set("a/b", std::string("x\0y", 3));
  CHECK(store.try_get("a/b") == std::string("x\0y", 3));
  store.set("a/b", "replaced");
  CHECK(store.get("a/b", 1s) == "replaced");
  store.set("empty", "");
  CHECK(store.get("empty", 1s).empty());
  CHECK_THROWS_WITH(store.get("never", 50ms),
                    Catch::Contains("'never' did not appear") && Catch::Contains(store.describe()));
  CHECK_THROWS_WITH(store.set("bad key", "v"), Catch::Contains("is not valid"));
  CHECK_THROWS_WITH(store.set("big", std::string(parallel::kMaxStoreValue + 1, 'x')),
                    Catch::Contains("the limit is 1 MiB"));
  // The first set_if_absent wins, whoever asks after it gets that value; set still replaces.
  CHECK(store.set_if_absent("round/members", "0,1") == "0,1");
  CHECK(store.set_if_absent("round/members", "1") == "0,1");
  CHECK(store.get("round/members", 1s) == "0,1");
  CHECK_THROWS_WITH(store.set_if_absent("bad key", "v"), Catch::Contains("is not valid"));
  // Many threads race for one key: one value wins, and every one of them sees it.
  std::vector<std::string> seen(8);
  std::vector<std::thread> racers;
  for (std::size_t i = 0; i < seen.size(); ++i)
    racers.emplace_back([&, i] { seen[i] = store.set_if_absent("race", std::to_string(i)); });
  for (auto& t : racers) t.join();
  for (const auto& s : seen) CHECK(s == seen[0]);
}

}  // namespace

TEST_CASE("the file store sets, gets and times out") {
  test::TempDir dir;
  auto store = parallel::make_file_store(dir.path + "/store", "file://" + dir.path + "/store");
  exercise(*store);
  // Keys that look like paths stay inside the folder.
  store->set("..", "dots");
  CHECK(store->get("..", 1s) == "dots");
  CHECK(std::filesystem::exists(dir.path + "/store/k..."));
}

TEST_CASE("the file store refuses a folder it cannot create") {
  CHECK_THROWS_WITH(parallel::make_file_store("/proc/nubo-cannot", "file:///proc/nubo-cannot"),
                    Catch::Contains("cannot use the rendezvous folder /proc/nubo-cannot"));
}

TEST_CASE("the file store rejects an oversized record") {
  test::TempDir dir;
  auto store = parallel::make_file_store(dir.path, "file://" + dir.path);
  {
    std::FILE* f = std::fopen((dir.path + "/k.huge").c_str(), "wb");
    REQUIRE(f);
    std::vector<char> junk(parallel::kMaxStoreValue + 10, 'j');
    std::fwrite(junk.data(), 1, junk.size(), f);
    std::fclose(f);
  }
  CHECK_THROWS_WITH(store->try_get("huge"),
                    Catch::Contains("more than a rendezvous record may have"));
  // A FIFO where a record should be is refused at once, not waited on for a writer.
  REQUIRE(::mkfifo((dir.path + "/k.fifo").c_str(), 0600) == 0);
  CHECK_THROWS_WITH(store->try_get("fifo"), Catch::Contains("is a FIFO"));
}

TEST_CASE("process records are checked when decoded") {
  parallel::ProcessInfo p{4, 2, "host-a", "boot-1/host-a", 123};
  auto back = parallel::decode(parallel::encode(p), 1, "here");
  CHECK(back.world_size == 4);
  CHECK(back.local_size == 2);
  CHECK(back.host == "host-a");
  CHECK(back.host_id == "boot-1/host-a");
  CHECK(back.pid == 123);
  CHECK_THROWS_WITH(parallel::decode("hello", 3, "file:///x"),
                    Catch::Contains("rank 3's record in file:///x is not a nubo process record"));
  CHECK_THROWS_WITH(parallel::decode("nubo-process 1\nworld zero\nlocal 1\n", 0, "x"),
                    Catch::Contains("not a nubo process record"));
}

TEST_CASE("the Redis store works against a real redis-server") {
  auto redis = test::RedisServer::start();
  if (!redis) {
    NUBO_SKIP("redis-server is not installed (Debian redis-server; .ci/install-deps installs it)");
  }
  parallel::RendezvousUrl url = parallel::parse_rendezvous(redis->url("store-test"), "test");
  auto store = parallel::open_store(url, false, 2s);
  exercise(*store);
}

TEST_CASE("an unreachable Redis is a clear error") {
  const int port = test::free_port();
  auto url = parallel::parse_rendezvous("redis://127.0.0.1:" + std::to_string(port) + "/x", "t");
  CHECK_THROWS_WITH(parallel::open_store(url, false, 1s),
                    Catch::Contains("cannot reach the Redis rendezvous at redis://127.0.0.1:"));
}

namespace {

struct ScopedToken {
  explicit ScopedToken(const char* value) {
    if (value) {
      ::setenv("NUBO_TOKEN", value, 1);
    } else {
      ::unsetenv("NUBO_TOKEN");
    }
  }
  ~ScopedToken() { ::unsetenv("NUBO_TOKEN"); }
};

parallel::RendezvousUrl tcp_url(int port) {
  return parallel::parse_rendezvous("tcp://127.0.0.1:" + std::to_string(port), "test");
}

}  // namespace

TEST_CASE("the tcp store: rank 0 hosts it, every process reads what any wrote") {
  const auto url = tcp_url(test::free_port());
  for (const char* token : {static_cast<const char*>(nullptr), "s3cret"}) {
    ScopedToken t(token);
    INFO("token " << (token ? token : "(none)"));
    auto host = parallel::open_store(url, true, 2s);
    auto other = parallel::open_store(url, false, 2s);
    exercise(*other);
    other->set("from/other", "1");
    CHECK(host->get("from/other", 1s) == "1");
    host->set("from/host", std::string(parallel::kMaxStoreValue, 'v'));  // the largest value
    CHECK(other->get("from/host", 1s).size() == parallel::kMaxStoreValue);
  }
}

TEST_CASE("the tcp store refuses a process with another token, or none") {
  const auto url = tcp_url(test::free_port());
  auto host = [&] {
    ScopedToken t("right");
    return parallel::open_store(url, true, 2s);
  }();
  {
    ScopedToken t("wrong");
    CHECK_THROWS_MATCHES(
        parallel::open_store(url, false, 2s), Error, Catch::Predicate<Error>([](const Error& e) {
          return e.code() == Errc::invalid_argument &&
                 std::string(e.what()).find("the tokens differ") != std::string::npos;
        }));
  }
  {
    ScopedToken t(nullptr);
    CHECK_THROWS_WITH(parallel::open_store(url, false, 2s),
                      Catch::Contains("requires the job's token: set NUBO_TOKEN"));
  }
  ScopedToken t("right");
  auto ok = parallel::open_store(url, false, 2s);
  ok->set("still", "serving");  // the refusals did not hurt the server
  CHECK(host->get("still", 1s) == "serving");
}

TEST_CASE("the tcp store without rank 0 says so after the timeout") {
  ScopedToken t(nullptr);
  CHECK_THROWS_WITH(
      parallel::open_store(tcp_url(test::free_port()), false, 300ms),
      Catch::Contains("did not answer within") && Catch::Contains("is rank 0 running?"));
}

TEST_CASE("the tcp store survives hostile clients: bad magic, huge lengths, forged messages") {
  ScopedToken t(nullptr);
  const int port = test::free_port();
  auto host = parallel::open_store(tcp_url(port), true, 2s);
  const auto raw = [&](const std::string& bytes) {
    tcp::Socket s = tcp::Socket::connect({"127.0.0.1", static_cast<std::uint16_t>(port)}, 2);
    s.write_all({reinterpret_cast<const std::byte*>(bytes.data()), bytes.size()});
    char c = 0;
    // The server answers its hello, then drops the connection at the first bad request.
    while (s.readable(2000)) {
      try {
        s.read_exact({reinterpret_cast<std::byte*>(&c), 1});
      } catch (const Error&) {
        break;
      }
    }
  };
  raw("HTTP/1.1 GET /\r\n\r\n");  // not the protocol
  std::string hello = "NUBOSTORE1";
  hello.push_back('\0');
  hello.append(32, 'n');
  raw(hello + std::string("\x01\xff\xff\xff\xff\xff\xff", 7));   // key and value over limits
  raw(hello + std::string("\x09\x01\x00\x00\x00\x00\x00k", 8));  // an unknown request
  auto other = parallel::open_store(tcp_url(port), false, 2s);
  other->set("after", "ok");
  CHECK(host->get("after", 1s) == "ok");
}
