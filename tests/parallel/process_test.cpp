// Teams across processes: every collective through Gloo (NUBO_SHM_DISABLE=1) and through shared
// memory with a file rendezvous and with a real Redis, a process killed in the middle of an
// all-reduce, and the ways a job can be started wrong. The processes are
// tests/parallel/peer.cpp, started with the variables nubo-run sets. transport_test.cpp has
// what is particular to shared memory and to jobs on several hosts.
#include <catch2/catch.hpp>

#include "skip.hpp"

#include <signal.h>
#include <sys/wait.h>

#include <functional>

#include "parallel/links/gloo_link.hpp"
#include "peer_job.hpp"

using namespace nubo::test;
using namespace std::chrono_literals;

namespace {

// A build without Gloo (Debian libgloo-dev) has no teams across processes; .ci/install-deps
// installs it, so this is for hand-made builds only.
#define REQUIRE_GLOO()                                          \
  do {                                                          \
    if (!nubo::parallel::have_gloo()) {                         \
      NUBO_SKIP("this build has no Gloo (Debian libgloo-dev)"); \
    }                                                           \
  } while (0)

}  // namespace

TEST_CASE("every collective across 2, 3 and 4 processes through Gloo, bit-exact") {
  REQUIRE_GLOO();
  for (int n : {2, 3, 4}) {
    INFO(n << " processes");
    TempDir where;
    Job job(n, file_rendezvous(where), {"collectives"}, {"NUBO_SHM_DISABLE=1"});
    require_success(job, job.finish(120s));
  }
}

TEST_CASE("every collective across 2 processes of 2 workers each") {
  TempDir where;
  Job job(2, file_rendezvous(where), {"collectives", "2"});
  auto statuses = job.finish(120s);
  require_success(job, statuses);
  CHECK_THAT(job.procs[1].output(),
             Catch::Contains("rank 1 of 2 (nubo-run): 2 workers of 4 checked"));
}

TEST_CASE("every collective across 3 processes with a Redis rendezvous") {
  auto redis = RedisServer::start();
  if (!redis) {
    NUBO_SKIP("redis-server is not installed (Debian redis-server; .ci/install-deps installs it)");
  }
  Job job(3, redis->url("collectives"), {"collectives"});
  require_success(job, job.finish(120s));
}

TEST_CASE("killing one process mid all-reduce over Gloo fails the others, naming it") {
  REQUIRE_GLOO();
  TempDir where;
  Job job(3, file_rendezvous(where), {"loop", where.path},
          {"NUBO_TIMEOUT=20", "NUBO_SHM_DISABLE=1"});
  for (int r = 0; r < 3; ++r) {
    REQUIRE(wait_for_file(where.path + "/" + std::to_string(r), 60s));
  }
  job.procs[1].signal(SIGKILL);
  auto statuses = job.finish(60s);
  CHECK(WIFSIGNALED(statuses[1]));
  for (int r : {0, 2}) {
    const auto out = job.procs[static_cast<std::size_t>(r)].output();
    INFO("rank " << r << " " << status_text(statuses[static_cast<std::size_t>(r)]) << ": " << out);
    CHECK((WIFEXITED(statuses[static_cast<std::size_t>(r)]) &&
           WEXITSTATUS(statuses[static_cast<std::size_t>(r)]) == 3));
    CHECK_THAT(out, Catch::Contains("all_reduce(avg) of 1048576 x f32") &&
                        Catch::Contains("rank 1 is gone"));
  }
}

TEST_CASE("mismatched sizes across processes fail every process, naming both calls") {
  for (const char* shm_disable : {"NUBO_SHM_DISABLE=0", "NUBO_SHM_DISABLE=1"}) {
    INFO(shm_disable);
    if (std::string(shm_disable).back() == '1' && !nubo::parallel::have_gloo()) {
      WARN("this build has no Gloo (Debian libgloo-dev): the Gloo half is skipped");
      nubo::test::note_skipped();  // the shared-memory half still runs
      continue;
    }
    TempDir where;
    Job job(2, file_rendezvous(where), {"mismatch"}, {shm_disable});
    auto statuses = job.finish(60s);
    for (std::size_t r = 0; r < 2; ++r) {
      const auto out = job.procs[r].output();
      INFO(out);
      CHECK((WIFEXITED(statuses[r]) && WEXITSTATUS(statuses[r]) == 3));
      CHECK_THAT(out, Catch::Contains("invalid argument") &&
                          Catch::Contains("differs between the processes") &&
                          Catch::Contains("all_reduce(sum) of 101 x f32") &&
                          Catch::Contains("all_reduce(sum) of 100 x f32"));
    }
  }
}

TEST_CASE("processes that disagree on the world size are told so") {
  TempDir where;
  Job job(2, file_rendezvous(where), {"join"}, {"NUBO_TIMEOUT=10"}, [](int r) {
    return std::vector<std::string>{"NUBO_WORLD_SIZE=" + std::to_string(r == 0 ? 2 : 3)};
  });
  auto statuses = job.finish(60s);
  for (std::size_t r = 0; r < 2; ++r) {
    const auto out = job.procs[r].output();
    INFO(out);
    CHECK((WIFEXITED(statuses[r]) && WEXITSTATUS(statuses[r]) == 3));
    CHECK_THAT(out, Catch::Contains("disagree on the world size"));
  }
}

TEST_CASE("a rank that never comes is named when joining times out") {
  TempDir where;
  Job job(1, file_rendezvous(where), {"join"}, {"NUBO_WORLD_SIZE=3", "NUBO_TIMEOUT=1"});
  auto statuses = job.finish(60s);
  const auto out = job.procs[0].output();
  INFO(out);
  CHECK((WIFEXITED(statuses[0]) && WEXITSTATUS(statuses[0]) == 3));
  CHECK_THAT(out, Catch::Contains("timed out") && Catch::Contains("ranks 1, 2 of 3 never arrived"));
}

TEST_CASE("an unreachable rendezvous is a clear error") {
  const std::string url = "redis://127.0.0.1:" + std::to_string(free_port()) + "/job";
  Job job(2, url, {"join"}, {"NUBO_TIMEOUT=2"});
  auto statuses = job.finish(60s);
  for (std::size_t r = 0; r < 2; ++r) {
    const auto out = job.procs[r].output();
    INFO(out);
    CHECK((WIFEXITED(statuses[r]) && WEXITSTATUS(statuses[r]) == 3));
    CHECK_THAT(out, Catch::Contains("unavailable") &&
                        Catch::Contains("cannot reach the Redis rendezvous at " + url));
  }
}

TEST_CASE("a malformed NUBO_RENDEZVOUS is a clear error naming the variable") {
  Job job(2, "shared-folder", {"join"});
  auto statuses = job.finish(60s);
  for (std::size_t r = 0; r < 2; ++r) {
    const auto out = job.procs[r].output();
    INFO(out);
    CHECK((WIFEXITED(statuses[r]) && WEXITSTATUS(statuses[r]) == 3));
    CHECK_THAT(out, Catch::Contains("NUBO_RENDEZVOUS='shared-folder' is not a valid rendezvous"));
  }
}

TEST_CASE("a worker that gives up while its collective is in flight stops the other processes") {
  for (const char* shm_disable : {"NUBO_SHM_DISABLE=0", "NUBO_SHM_DISABLE=1"}) {
    INFO(shm_disable);
    if (std::string(shm_disable).back() == '1' && !nubo::parallel::have_gloo()) {
      WARN("this build has no Gloo (Debian libgloo-dev): the Gloo half is skipped");
      nubo::test::note_skipped();  // the shared-memory half still runs
      continue;
    }
    TempDir where;
    Job job(2, file_rendezvous(where), {"abort-async"}, {shm_disable});
    auto statuses = job.finish(60s);
    const auto out0 = job.procs[0].output(), out1 = job.procs[1].output();
    INFO(out0 << "\n---\n" << out1);
    CHECK((WIFEXITED(statuses[0]) && WEXITSTATUS(statuses[0]) == 4));
    CHECK_THAT(out0, Catch::Contains("rank 1 gave up"));
    CHECK((WIFEXITED(statuses[1]) && WEXITSTATUS(statuses[1]) == 3));
    CHECK_THAT(out1, Catch::Contains("cancelled") && Catch::Contains("(collective #") &&
                         Catch::Contains("failed: rank 1 failed: rank 1 gave up"));
  }
}

TEST_CASE("the sharded optimizer across 2 and 3 processes: stages 1 and 2 end where stage 0 does") {
  REQUIRE_GLOO();
  const auto hash_of = [](Job& job, int rank) {
    const std::string out = job.procs[static_cast<std::size_t>(rank)].output();
    const auto at = out.find("sharded: ");
    return at == std::string::npos ? std::string("(none)") : out.substr(at + 9, 16);
  };
  for (int n : {2, 3}) {
    for (const char* precision : {"f32", "bf16"}) {
      INFO(n << " processes, " << precision);
      std::string replicated;
      for (const char* stage : {"0", "1", "2"}) {
        TempDir where;
        Job job(n, file_rendezvous(where), {"sharded", stage, precision});
        require_success(job, job.finish(120s));
        for (int r = 0; r < n; ++r) {
          if (replicated.empty()) replicated = hash_of(job, r);
          REQUIRE(hash_of(job, r) == replicated);
        }
      }
    }
  }
}
