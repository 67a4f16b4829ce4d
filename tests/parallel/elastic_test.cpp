// Rounds of an elastic job (nubo/elastic.hpp), with threads as the nodes and a folder as the
// rendezvous: a full round forms at once; a short one after the last call; a late node waits
// for the next round and joins it; everyone agrees on one membership; and bad options, a
// tcp:// store, too few nodes and a finished job are refused.
#include <catch2/catch.hpp>

#include <future>
#include <thread>

#include "nubo/elastic.hpp"
#include "nubo/error.hpp"
#include "process_helpers.hpp"

using namespace std::chrono_literals;

namespace {

nubo::ElasticOptions nodes(int min, int max, std::chrono::milliseconds last_call = 300ms) {
  nubo::ElasticOptions o;
  o.min_nodes = min;
  o.max_nodes = max;
  o.last_call = last_call;
  o.join_timeout = 20s;
  return o;
}

}  // namespace

TEST_CASE("a round forms when every node has come, and each knows its place") {
  nubo::test::TempDir dir;
  const auto url = "file://" + dir.path + "/job";
  std::vector<std::future<nubo::ElasticRound>> joined;
  for (int rank : {2, 0, 1})
    joined.push_back(std::async(std::launch::async, [&, rank] {
      return nubo::join_elastic_round(url, rank, -1, nodes(2, 3, 60s));  // no waiting: all came
    }));
  for (int i = 0; i < 3; ++i) {
    const auto r = joined[static_cast<std::size_t>(i)].get();
    CHECK(r.round == 0);
    CHECK(r.members == std::vector<int>{0, 1, 2});
    CHECK(r.node_index == std::vector<int>{2, 0, 1}[static_cast<std::size_t>(i)]);
  }
}

TEST_CASE(
    "with MIN nodes a round forms after the last call, and a late node joins the next round") {
  nubo::test::TempDir dir;
  const auto url = "file://" + dir.path + "/job";
  const auto started = std::chrono::steady_clock::now();
  const auto first = nubo::join_elastic_round(url, 0, -1, nodes(1, 2));
  CHECK(std::chrono::steady_clock::now() - started >= 300ms);
  CHECK(first.members == std::vector<int>{0});
  // Node 1 comes after round 0 formed without it: it waits for round 1, which forms when node 0
  // restarts; both are in it.
  auto late = std::async(std::launch::async,
                         [&] { return nubo::join_elastic_round(url, 1, -1, nodes(1, 2)); });
  CHECK(late.wait_for(500ms) == std::future_status::timeout);
  const auto second = nubo::join_elastic_round(url, 0, first.round, nodes(1, 2));
  const auto joined = late.get();
  CHECK(second.round == 1);
  CHECK(joined.round == 1);
  CHECK(second.members == std::vector<int>{0, 1});
  CHECK(joined.node_index == 1);
  // Once the job has ended, a node that comes is told so.
  nubo::finish_elastic_job(url, 0);
  CHECK_THROWS_WITH(nubo::join_elastic_round(url, 1, -1, nodes(1, 2)),
                    Catch::Contains("has finished (status 0)"));
}

TEST_CASE("elastic rounds refuse bad options, a tcp:// store and too few nodes") {
  nubo::test::TempDir dir;
  const auto url = "file://" + dir.path + "/job";
  CHECK_THROWS_WITH(nubo::join_elastic_round(url, 0, -1, nodes(3, 2)),
                    Catch::Contains("1 <= MIN <= MAX"));
  CHECK_THROWS_WITH(nubo::join_elastic_round(url, 2, -1, nodes(1, 2)),
                    Catch::Contains("node rank 2 is not in 0 .. 1"));
  CHECK_THROWS_WITH(nubo::join_elastic_round("tcp://127.0.0.1:1", 0, -1, nodes(1, 2)),
                    Catch::Contains("outlives every node"));
  auto few = nodes(2, 3);
  few.join_timeout = 300ms;
  nubo::Errc code{};
  try {
    nubo::join_elastic_round(url, 0, -1, few);
  } catch (const nubo::Error& e) {
    code = e.code();
    CHECK_THAT(e.what(), Catch::Contains("1 of the 2 nodes the job needs at least came"));
  }
  CHECK(code == nubo::Errc::timeout);
  // A pause that says stop (nubo-run got a signal) ends the wait.
  auto stopped = nodes(2, 3);
  stopped.pause = [](std::chrono::milliseconds) { return false; };
  CHECK_THROWS_WITH(nubo::join_elastic_round(url, 1, -1, stopped),
                    Catch::Contains("stopped while waiting"));
}
