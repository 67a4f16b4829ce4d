// Bucket autotuning and its cache: a miss measures and writes, a hit reads; a corrupt or stale
// cache is ignored (with a warning) and rewritten; NUBO_AUTOTUNE=0 turns it off.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>

#include "helpers.hpp"

using namespace train_test;

TEST_CASE("the autotune cache: miss, hit, corrupt, stale, off", "[train]") {
  auto dir = temp_dir("autotune");
  const auto cache = (dir / "at.json").string();
  ::setenv("NUBO_AUTOTUNE_CACHE", cache.c_str(), 1);
  ::unsetenv("NUBO_AUTOTUNE");
  auto data = synthetic(256);
  auto team = cpu_team(2);
  auto o = small_options();
  o.autotune = true;
  auto make = [&] { return std::make_unique<nubo::DataParallelTrainer>(team, o, data); };

  CHECK(make()->autotune_result() == "miss");
  REQUIRE(std::filesystem::exists(cache));
  auto j = nlohmann::json::parse(std::ifstream(cache));
  CHECK(j["schema"] == "nubo-autotune/1");
  CHECK(j["entries"].size() == 1);
  auto t = make();
  CHECK(t->autotune_result() == "hit");
  CHECK(t->bucket_bytes() == j["entries"].begin().value()["bucket_bytes"].get<std::size_t>());

  {
    std::ofstream f(cache);
    f << "{ not json";
  }
  CHECK(make()->autotune_result() == "miss");
  CHECK(make()->autotune_result() == "hit");  // rewritten

  j = nlohmann::json::parse(std::ifstream(cache));
  j["nubo_version"] = "0.0.1";
  std::ofstream(cache) << j.dump();
  CHECK(make()->autotune_result() == "miss");

  o.global_batch = 32;  // another shape: another key
  CHECK(make()->autotune_result() == "miss");

  ::setenv("NUBO_AUTOTUNE", "0", 1);
  CHECK(make()->autotune_result() == "off");
  ::unsetenv("NUBO_AUTOTUNE");
  ::unsetenv("NUBO_AUTOTUNE_CACHE");
  std::filesystem::remove_all(dir);
}
