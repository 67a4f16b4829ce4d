// The job variables nubo-run sets (NUBO_RANK, NUBO_LOCAL_RANK, NUBO_WORLD_SIZE,
// NUBO_RENDEZVOUS), NUBO_TIMEOUT, and rendezvous locations: good values parse, bad ones are
// errors that name the variable.
#include <catch2/catch.hpp>

#include <cstdlib>

#include "common/env.hpp"
#include "nubo/error.hpp"
#include "nubo/parallel.hpp"
#include "parallel/rendezvous/rendezvous_url.hpp"
#include "scoped_env.hpp"

using namespace nubo;

namespace {

using nubo_test::ScopedEnv;

struct CleanJobEnv {
  CleanJobEnv() {
    for (const char* v :
         {"NUBO_RANK", "NUBO_LOCAL_RANK", "NUBO_WORLD_SIZE", "NUBO_RENDEZVOUS", "NUBO_TIMEOUT"}) {
      ::unsetenv(v);
    }
  }
};

}  // namespace

TEST_CASE("no job variables: a job of this process alone") {
  CleanJobEnv clean;
  CHECK_FALSE(env::job().has_value());
  auto spec = JobSpec::from_env();
  CHECK(spec.rank == 0);
  CHECK(spec.world_size == 1);
}

TEST_CASE("the job variables parse, NUBO_LOCAL_RANK defaulting to NUBO_RANK") {
  CleanJobEnv clean;
  ScopedEnv r("NUBO_RANK", "2"), w("NUBO_WORLD_SIZE", "4"), z("NUBO_RENDEZVOUS", "file:///tmp/j");
  auto j = env::job();
  REQUIRE(j);
  CHECK(j->rank == 2);
  CHECK(j->local_rank == 2);
  CHECK(j->world_size == 4);
  CHECK(j->rendezvous == "file:///tmp/j");
  ScopedEnv l("NUBO_LOCAL_RANK", "0");
  CHECK(env::job()->local_rank == 0);
}

TEST_CASE("bad job variables name the variable") {
  CleanJobEnv clean;
  SECTION("missing ones") {
    ScopedEnv r("NUBO_RANK", "0");
    CHECK_THROWS_WITH(env::job(), Catch::Contains("NUBO_WORLD_SIZE, NUBO_RENDEZVOUS are not set"));
  }
  SECTION("not a number") {
    ScopedEnv r("NUBO_RANK", "one"), w("NUBO_WORLD_SIZE", "2"), z("NUBO_RENDEZVOUS", "file:///x");
    CHECK_THROWS_WITH(env::job(), Catch::Contains("NUBO_RANK") && Catch::Contains("'one'"));
  }
  SECTION("rank beyond the world") {
    ScopedEnv r("NUBO_RANK", "2"), w("NUBO_WORLD_SIZE", "2"), z("NUBO_RENDEZVOUS", "file:///x");
    CHECK_THROWS_WITH(env::job(), Catch::Contains("NUBO_RANK=2 is not below NUBO_WORLD_SIZE=2"));
  }
  SECTION("a world of none") {
    ScopedEnv r("NUBO_RANK", "0"), w("NUBO_WORLD_SIZE", "0"), z("NUBO_RENDEZVOUS", "file:///x");
    CHECK_THROWS_WITH(env::job(), Catch::Contains("NUBO_WORLD_SIZE"));
  }
  SECTION("a bad rendezvous") {
    ScopedEnv r("NUBO_RANK", "0"), w("NUBO_WORLD_SIZE", "2"), z("NUBO_RENDEZVOUS", "http://h:1");
    CHECK_THROWS_WITH(JobSpec::from_env(),
                      Catch::Contains("NUBO_RENDEZVOUS='http://h:1'") &&
                          Catch::Contains("the scheme must be file, tcp or redis"));
  }
}

TEST_CASE("NUBO_TIMEOUT takes seconds") {
  CleanJobEnv clean;
  CHECK_FALSE(env::timeout().has_value());
  {
    ScopedEnv t("NUBO_TIMEOUT", "2.5");
    CHECK(env::timeout() == std::chrono::milliseconds(2500));
  }
  for (const char* bad : {"0", "-1", "soon", "1e9"}) {
    ScopedEnv t("NUBO_TIMEOUT", bad);
    CHECK_THROWS_WITH(env::timeout(), Catch::Contains("NUBO_TIMEOUT='" + std::string(bad) + "'"));
  }
}

TEST_CASE("rendezvous locations parse") {
  using parallel::RendezvousUrl;
  auto f = parallel::parse_rendezvous("file:///shared/job/", "x");
  CHECK(f.kind == RendezvousUrl::Kind::file);
  CHECK(f.path == "/shared/job");
  auto r = parallel::parse_rendezvous("redis://10.0.0.5:7000/run-42", "x");
  CHECK(r.kind == RendezvousUrl::Kind::redis);
  CHECK(r.host == "10.0.0.5");
  CHECK(r.port == 7000);
  CHECK(r.job == "run-42");
  auto d = parallel::parse_rendezvous("redis://cache.internal", "x");
  CHECK(d.port == 6379);
  CHECK(d.job.empty());
  auto v6 = parallel::parse_rendezvous("redis://[::1]:6380", "x");
  CHECK(v6.host == "::1");
  CHECK(v6.port == 6380);
}

TEST_CASE("bad rendezvous locations say what is wrong") {
  const std::pair<const char*, const char*> cases[] = {
      {"/tmp/dir", "no scheme"},
      {"file://relative/dir", "absolute path"},
      {"redis://", "host is missing"},
      {"redis://host:99999", "out of range"},
      {"redis://host:", "port is empty"},
      {"redis://user:pw@host", "credentials"},
      {"redis://host/job with space", "job name"},
      {"redis://::1:6379", "IPv6 address in brackets"},
      {"http://host", "scheme must be file, tcp or redis"},
      {"tcp://host", "port is missing"},
      {"tcp://host:1/job", "only tcp://host:port"},
  };
  for (auto [url, problem] : cases) {
    INFO(url);
    CHECK_THROWS_WITH(check_rendezvous(url, "--rendezvous"),
                      Catch::Contains("--rendezvous='") && Catch::Contains(problem));
  }
}
