// The rendezvous stores: a folder, and a real redis-server started on loopback for the test.
#include <catch2/catch.hpp>

#include <filesystem>

#include "nubo/error.hpp"
#include "parallel/job.hpp"
#include "parallel/store.hpp"
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
  CHECK_THROWS_WITH(store->try_get("huge"), Catch::Contains("more than any nubo record"));
}

TEST_CASE("process records are checked when decoded") {
  parallel::ProcessInfo p{4, 2, "host-a", 123};
  auto back = parallel::decode(parallel::encode(p), 1, "here");
  CHECK(back.world_size == 4);
  CHECK(back.local_size == 2);
  CHECK(back.host == "host-a");
  CHECK_THROWS_WITH(parallel::decode("hello", 3, "file:///x"),
                    Catch::Contains("rank 3's record in file:///x is not a nubo process record"));
  CHECK_THROWS_WITH(parallel::decode("nubo-process 1\nworld zero\nlocal 1\n", 0, "x"),
                    Catch::Contains("not a nubo process record"));
}

TEST_CASE("the Redis store works against a real redis-server") {
  auto redis = test::RedisServer::start();
  if (!redis) {
    WARN(
        "redis-server is not installed (Debian redis-server; .ci/install-deps installs it): "
        "skipping the Redis store test");
    return;
  }
  parallel::RendezvousUrl url = parallel::parse_rendezvous(redis->url("store-test"), "test");
  auto store = parallel::open_store(url, 2s);
  exercise(*store);
}

TEST_CASE("an unreachable Redis is a clear error") {
  const int port = test::free_port();
  auto url = parallel::parse_rendezvous("redis://127.0.0.1:" + std::to_string(port) + "/x", "t");
  CHECK_THROWS_WITH(parallel::open_store(url, 1s),
                    Catch::Contains("cannot reach the Redis rendezvous at redis://127.0.0.1:"));
}
