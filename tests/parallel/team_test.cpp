// Teams in one process: sharding, buffers, asynchronous collectives, and every way a team can
// go wrong (a failing worker, a missing one, mismatched calls, bad arguments), each of which
// must end in a clear error on every worker, never a hang.
#include <catch2/catch.hpp>

#include <atomic>
#include <mutex>
#include <numeric>
#include <stdexcept>
#include <thread>

#include "nubo/error.hpp"
#include "nubo/parallel.hpp"
#include "workers.hpp"

using namespace nubo;

namespace {

using nubo_test::host_workers;
using nubo_test::sim_workers;

// Each worker's outcome: its error code and message (Errc::ok when it returned normally).
struct Outcomes {
  std::mutex mutex;
  std::vector<std::pair<Errc, std::string>> by_rank;
  explicit Outcomes(int n) : by_rank(static_cast<std::size_t>(n), {Errc::ok, ""}) {}
  void record(int rank, const Error& e) {
    std::lock_guard<std::mutex> lock(mutex);
    by_rank[static_cast<std::size_t>(rank)] = {e.code(), e.what()};
  }
};

}  // namespace

TEST_CASE("shard splits a batch evenly: the first n % size ranks get one more row") {
  Team team(host_workers(3));
  std::vector<Shard> shards(3);
  team.run([&](Worker& w) { shards[static_cast<std::size_t>(w.rank())] = w.shard(10); });
  CHECK(shards[0].begin == 0);
  CHECK(shards[0].count == 4);
  CHECK(shards[1].begin == 4);
  CHECK(shards[1].count == 3);
  CHECK(shards[2].begin == 7);
  CHECK(shards[2].count == 3);
  team.run([&](Worker& w) { shards[static_cast<std::size_t>(w.rank())] = w.shard(2); });
  CHECK(shards[2].count == 0);
  CHECK(shards[2].begin == 2);
}

TEST_CASE("a worker knows its rank, the team size and its device") {
  Team team(sim_workers(4));
  CHECK(team.size() == 4);
  CHECK(team.local_size() == 4);
  std::vector<int> ranks(4, -1), devices(4, -1), sizes(4, 0);
  team.run([&](Worker& w) {
    auto r = static_cast<std::size_t>(w.rank());
    ranks[r] = w.local_rank();
    devices[r] = w.device().index;
    sizes[r] = w.size();
  });
  CHECK(ranks == std::vector<int>{0, 1, 2, 3});
  CHECK(devices == std::vector<int>{0, 1, 2, 3});
  CHECK(sizes == std::vector<int>{4, 4, 4, 4});
}

TEST_CASE("buffers copy to and from the device and reject ranges outside them") {
  Team team(sim_workers(1));
  team.run([&](Worker& w) {
    auto b = w.alloc<std::int32_t>(4);
    std::vector<std::int32_t> v{1, 2, 3, 4};
    b.write(v);
    std::vector<std::int32_t> tail(2);
    b.read(tail, 2);
    if (tail != std::vector<std::int32_t>{3, 4}) throw std::runtime_error("bad read");
    bool threw = false;
    try {
      b.write(v, 1);
    } catch (const Error& e) {
      threw = e.code() == Errc::invalid_argument;
    }
    if (!threw) throw std::runtime_error("write past the end was accepted");
  });
}

TEST_CASE("asynchronous collectives run in issue order and may be waited in any order") {
  Team team(host_workers(3));
  Outcomes out(3);
  team.run([&](Worker& w) {
    std::vector<Buffer<float>> bufs;
    std::vector<Pending> pending;
    for (int k = 0; k < 8; ++k) {
      bufs.push_back(w.alloc<float>(100));
      bufs.back().write(std::vector<float>(100, static_cast<float>(w.rank() + k)));
    }
    for (auto& b : bufs) pending.push_back(w.all_reduce_async(b, ReduceOp::sum));
    auto barrier = w.barrier_async();
    for (auto it = pending.rbegin(); it != pending.rend(); ++it) it->wait();
    barrier.wait();
    for (int k = 0; k < 8; ++k) {
      auto v = bufs[static_cast<std::size_t>(k)].to_vector();
      if (v[0] != static_cast<float>(0 + 1 + 2 + 3 * k)) {
        out.record(w.rank(), Error(Errc::internal, "wrong sum for buffer " + std::to_string(k)));
      }
    }
    // A Pending dropped without wait() still completes before its buffer goes away.
    { auto dropped = w.all_reduce_async(bufs[0]); }
    w.barrier();
  });
  for (auto& [code, msg] : out.by_rank) CHECK(msg == "");
}

TEST_CASE("a failing worker stops the others' collectives and run() rethrows its error") {
  Team team(host_workers(3), TeamOptions{std::chrono::seconds(60)});
  Outcomes out(3);
  try {
    team.run([&](Worker& w) {
      if (w.rank() == 1) throw std::runtime_error("out of cheese");
      auto b = w.alloc<float>(16);
      try {
        w.all_reduce(b);  // rank 1 never comes: without the abort this would wait 60 s
      } catch (const Error& e) {
        out.record(w.rank(), e);
        throw;
      }
    });
    FAIL("run() returned normally");
  } catch (const std::runtime_error& e) {
    CHECK(std::string(e.what()) == "out of cheese");
  }
  for (int r : {0, 2}) {
    CHECK(out.by_rank[static_cast<std::size_t>(r)].first == Errc::cancelled);
    CHECK_THAT(out.by_rank[static_cast<std::size_t>(r)].second,
               Catch::Contains("rank 1 failed: out of cheese"));
  }
  // The team is usable again afterwards.
  std::atomic<int> ok{0};
  team.run([&](Worker& w) {
    auto b = w.alloc<std::int32_t>(1);
    b.write(std::vector<std::int32_t>{1});
    w.all_reduce(b);
    if (b.to_vector()[0] == 3) ++ok;
  });
  CHECK(ok == 3);
}

TEST_CASE("a worker that skips a collective is named when the others time out") {
  Team team(host_workers(3), TeamOptions{std::chrono::milliseconds(300)});
  Outcomes out(3);
  CHECK_THROWS_AS(team.run([&](Worker& w) {
    if (w.rank() == 2) return;  // never joins
    auto b = w.alloc<float>(4);
    try {
      w.all_reduce(b);
    } catch (const Error& e) {
      out.record(w.rank(), e);
      throw;
    }
  }),
                  Error);
  for (int r : {0, 1}) {
    CHECK(out.by_rank[static_cast<std::size_t>(r)].first == Errc::timeout);
    CHECK_THAT(out.by_rank[static_cast<std::size_t>(r)].second,
               Catch::Contains("rank 2 did not join"));
  }
}

TEST_CASE("mismatched collectives fail on every worker with both calls named") {
  Team team(host_workers(2), TeamOptions{std::chrono::seconds(30)});
  SECTION("sizes") {
    Outcomes out(2);
    CHECK_THROWS_AS(team.run([&](Worker& w) {
      auto b = w.alloc<float>(w.rank() == 0 ? 10 : 11);
      try {
        w.all_reduce(b);
      } catch (const Error& e) {
        out.record(w.rank(), e);
        throw;
      }
    }),
                    Error);
    for (auto& [code, msg] : out.by_rank) {
      CHECK(code == Errc::invalid_argument);
      CHECK_THAT(msg, Catch::Contains("rank 0 called all_reduce(sum) of 10 x f32") &&
                          Catch::Contains("rank 1 called all_reduce(sum) of 11 x f32"));
    }
  }
  SECTION("types and order") {
    Outcomes out(2);
    CHECK_THROWS_AS(team.run([&](Worker& w) {
      try {
        if (w.rank() == 0) {
          auto b = w.alloc<std::int64_t>(3);
          w.broadcast(b, 0);
        } else {
          auto b = w.alloc<float>(3);
          w.all_reduce(b, ReduceOp::max);
        }
      } catch (const Error& e) {
        out.record(w.rank(), e);
        throw;
      }
    }),
                    Error);
    for (auto& [code, msg] : out.by_rank) {
      CHECK(code == Errc::invalid_argument);
      CHECK_THAT(msg, Catch::Contains("broadcast from rank 0 of 3 x i64") &&
                          Catch::Contains("all_reduce(max) of 3 x f32"));
    }
  }
  // After a mismatch the team works again.
  team.run([](Worker& w) { w.barrier(); });
}

TEST_CASE("bad collective arguments are clear errors") {
  Team team(host_workers(2));
  Outcomes out(2);
  team.run([&](Worker& w) {
    auto in = w.alloc<float>(4);
    auto bad_out = w.alloc<float>(7);
    auto ints = w.alloc<std::int32_t>(8);
    auto check = [&](const char* expect, auto&& call) {
      try {
        call();
        out.record(w.rank(), Error(Errc::internal, std::string("accepted: ") + expect));
      } catch (const Error& e) {
        if (e.code() != Errc::invalid_argument ||
            std::string(e.what()).find(expect) == std::string::npos) {
          out.record(w.rank(), e);
        }
      }
    };
    check("must hold team size 2 x in's 4 elements", [&] { w.all_gather(in, bad_out); });
    check("in holds f32 but out i32", [&] { w.all_gather(in, ints); });
    check("root 5 is not a rank", [&] { w.broadcast(in, 5); });
    check("in and out overlap", [&] { w.reduce_scatter(in, in); });
    check("both must hold team size 2 x one block", [&] { w.all_to_all(in, bad_out); });
    check("in and out overlap", [&] { w.all_to_all(in, in); });
    Buffer<float> moved = std::move(in);
    check("empty (moved-from) buffer", [&] { w.all_reduce(in); });
    check("unknown reduce op", [&] { w.all_reduce(moved, static_cast<ReduceOp>(9)); });
  });
  for (auto& [code, msg] : out.by_rank) CHECK(msg == "");
}

TEST_CASE("a buffer of another worker is refused") {
  Team team(sim_workers(2));
  std::vector<Buffer<float>> bufs(2);
  team.run([&](Worker& w) { bufs[static_cast<std::size_t>(w.rank())] = w.alloc<float>(4); });
  Outcomes out(2);
  CHECK_THROWS_AS(team.run([&](Worker& w) {
    try {
      w.all_reduce(bufs[static_cast<std::size_t>(1 - w.rank())]);
    } catch (const Error& e) {
      out.record(w.rank(), e);
      throw;
    }
  }),
                  Error);
  CHECK_THAT(out.by_rank[0].second, Catch::Contains("not on rank 0's device"));
}

TEST_CASE("team construction rejects empty and repeated devices") {
  CHECK_THROWS_WITH(Team(std::vector<Device>{}), Catch::Contains("at least one device"));
  auto sims = sim_workers(2);
  sims[1] = sims[0];
  CHECK_THROWS_WITH(Team(sims), Catch::Contains("is listed twice"));
  Team host(host_workers(2));  // the CPU may repeat
  CHECK(host.size() == 2);
}

TEST_CASE("a worker cannot start its own team's run") {
  Team team(host_workers(1));
  CHECK_THROWS_WITH(team.run([&](Worker&) { team.run([](Worker&) {}); }),
                    Catch::Contains("already running"));
}

TEST_CASE("Team::host makes CPU workers and refuses counts outside 1 to 1024") {
  Team team = Team::host(3);
  CHECK(team.size() == 3);
  CHECK(team.worker(2).device().backend == Backend::host);
  CHECK_THROWS_WITH(Team::host(0), Catch::Contains("0 workers; use 1 to 1024"));
  CHECK_THROWS_WITH(Team::host(1025), Catch::Contains("1025 workers"));
}

TEST_CASE("a joined worker is called from the caller's own threads, one call at a time") {
  Team team = Team::join();  // no launcher: a team of this process alone
  Worker& w = team.worker();
  CHECK(w.size() == 1);
  auto buf = w.alloc<float>(4096);
  w.fill(buf, 1.0);
  // Four threads hammer the one worker; its calls are taken one at a time, so every
  // collective completes and the sum of one rank leaves the values as they were.
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      try {
        for (int i = 0; i < 50; ++i) {
          w.all_reduce(buf, ReduceOp::sum);
          w.all_reduce_async(buf, ReduceOp::max).wait();
          w.scale(buf, 1.0f);
          w.barrier();
        }
      } catch (...) {
        ++failures;
      }
    });
  }
  for (auto& t : threads) t.join();
  CHECK(failures == 0);
  CHECK(buf.to_vector() == std::vector<float>(4096, 1.0f));
}

TEST_CASE("worker() without an index needs a process of one worker") {
  Team team = Team::host(2);
  CHECK_THROWS_WITH(team.worker(), Catch::Contains("this process has 2 workers") &&
                                       Catch::Contains("worker(i)") && Catch::Contains("run()"));
  Team one = Team::host(1);
  CHECK(one.worker().rank() == 0);
}
