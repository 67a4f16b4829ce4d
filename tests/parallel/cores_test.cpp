// Sharing the host's cores: the split of share_cores (processes, workers, NUMA nodes, what a
// launcher already bound, the thread variables) on made-up machines, and on this one a team's
// workers each running their GEMMs on their share through a private OpenBLAS, the process's
// own OpenBLAS untouched, and --cpu-bind pinning each worker to its CPUs.
#include <sched.h>
#include <catch2/catch.hpp>

#include <algorithm>
#include <numeric>
#include <tuple>

#include "device/host/host_cores.hpp"
#include "device/host/openblas.hpp"
#include "nubo/parallel.hpp"
#include "parallel/core_share.hpp"
#include "rank_checks.hpp"
#include "scoped_env.hpp"
#include "workers.hpp"

using namespace nubo;
using nubo::detail::HostCore;
using nubo_test::ScopedEnv;

namespace {

// A machine of `nodes` NUMA nodes with `per_node` CPUs each, numbered node by node.
std::vector<HostCore> machine(int nodes, int per_node) {
  std::vector<HostCore> cores;
  for (int n = 0; n < nodes; ++n)
    for (int c = 0; c < per_node; ++c) cores.push_back({n * per_node + c, n, n, c});
  return cores;
}

parallel::CoreShareInput input(int workers, std::vector<HostCore> allowed, int online) {
  parallel::CoreShareInput in;
  in.workers = workers;
  in.allowed = std::move(allowed);
  in.online = online;
  return in;
}

std::vector<int> range(int first, int count) {
  std::vector<int> v(static_cast<std::size_t>(count));
  std::iota(v.begin(), v.end(), first);
  return v;
}

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kPrivateCopies = false;  // openblas_copies.hpp: none under the sanitizers
#else
constexpr bool kPrivateCopies = true;
#endif

}  // namespace

TEST_CASE("split_evenly: contiguous slices, the first ones larger, and more parts than CPUs wrap") {
  CHECK(parallel::split_evenly({0, 1, 2, 3, 4}, 2) ==
        std::vector<std::vector<int>>{{0, 1, 2}, {3, 4}});
  CHECK(parallel::split_evenly({4, 5}, 3) == std::vector<std::vector<int>>{{4}, {5}, {4}});
  CHECK(parallel::split_evenly({}, 2) == std::vector<std::vector<int>>{{}, {}});
}

TEST_CASE("workers of one process split its cores: threads = cores / workers") {
  auto in = input(2, machine(1, 8), 8);
  auto s = parallel::share_cores(in);
  CHECK(s.threads == 4);
  CHECK(s.process_cpus == range(0, 8));
  CHECK(s.cpus.empty());  // no binding asked for
  CHECK(s.reason == "8 CPUs / 2 workers");
  in.workers = 3;
  CHECK(parallel::share_cores(in).threads == 2);
  in.workers = 16;  // more workers than cores: one thread each, never zero
  CHECK(parallel::share_cores(in).threads == 1);
}

TEST_CASE("processes on one host split its cores, and a launcher's binding is kept") {
  auto in = input(1, machine(1, 8), 8);
  in.local_processes = 2;
  in.local_process = 1;
  auto s = parallel::share_cores(in);
  CHECK(s.threads == 4);
  CHECK(s.process_cpus == range(4, 4));
  CHECK(s.reason == "8 CPUs / 2 processes on the host");
  // mpirun or srun bound the process to 2 CPUs already: those are its share.
  in.allowed = {{6, 0, 0, 6}, {7, 0, 0, 7}};
  s = parallel::share_cores(in);
  CHECK(s.process_cpus == std::vector<int>{6, 7});
  CHECK(s.threads == 2);
  CHECK(s.reason == "2 CPUs the process may use");
}

TEST_CASE("OPENBLAS_NUM_THREADS and OMP_NUM_THREADS set the budget, as the user asked") {
  auto in = input(2, machine(1, 8), 8);
  in.env_threads = env::BlasThreads{"OMP_NUM_THREADS", 2};
  auto s = parallel::share_cores(in);
  CHECK(s.threads == 1);
  CHECK(s.reason == "OMP_NUM_THREADS=2 / 2 workers");
  ScopedEnv a("OPENBLAS_NUM_THREADS", "3"), b("OMP_NUM_THREADS", "5,2");
  CHECK(env::blas_threads()->threads == 3);
  CHECK(std::string(env::blas_threads()->variable) == "OPENBLAS_NUM_THREADS");
  ScopedEnv c("OPENBLAS_NUM_THREADS", nullptr);
  CHECK(env::blas_threads()->threads == 5);
  ScopedEnv d("OMP_NUM_THREADS", "many");
  CHECK_THROWS_WITH(env::blas_threads(), Catch::Contains("OMP_NUM_THREADS"));
  ScopedEnv e("OMP_NUM_THREADS", "0");
  CHECK_THROWS_WITH(env::blas_threads(), Catch::Contains("OMP_NUM_THREADS"));
}

TEST_CASE("binding is NUMA-aware: each worker's CPUs lie in one node") {
  auto in = input(4, machine(2, 8), 16);
  in.bind = true;
  auto s = parallel::share_cores(in);
  REQUIRE(s.cpus.size() == 4);
  CHECK(s.cpus[0] == range(0, 4));
  CHECK(s.cpus[1] == range(4, 4));
  CHECK(s.cpus[2] == range(8, 4));
  CHECK(s.cpus[3] == range(12, 4));
  // 3 workers on 2 nodes: none straddles a node (node 0 gets 2 workers, node 1 one).
  in.workers = 3;
  s = parallel::share_cores(in);
  REQUIRE(s.cpus.size() == 3);
  CHECK(s.cpus[0] == range(0, 4));
  CHECK(s.cpus[1] == range(4, 4));
  CHECK(s.cpus[2] == range(8, 8));
  // Fewer workers than nodes: a worker spans whole nodes.
  in = input(1, machine(4, 2), 8);
  in.bind = true;
  CHECK(parallel::share_cores(in).cpus == std::vector<std::vector<int>>{range(0, 8)});
  // Hyperthreads of a core stay together: CPUs 0 and 4 are one core, so are 1 and 5...
  std::vector<HostCore> smt;
  for (int c = 0; c < 4; ++c) smt.push_back({c, 0, 0, c});
  for (int c = 0; c < 4; ++c) smt.push_back({c + 4, 0, 0, c});
  std::sort(smt.begin(), smt.end(), [](const HostCore& a, const HostCore& b) {
    return std::tie(a.node, a.package, a.core, a.cpu) < std::tie(b.node, b.package, b.core, b.cpu);
  });
  in = input(2, smt, 8);
  in.bind = true;
  CHECK(parallel::share_cores(in).cpus ==
        std::vector<std::vector<int>>{{0, 4, 1, 5}, {2, 6, 3, 7}});
}

TEST_CASE("this machine's cores: every allowed CPU once, in node order") {
  const auto cores = detail::allowed_cores();
  REQUIRE(!cores.empty());
  CHECK(static_cast<int>(cores.size()) <= detail::online_cpus());
  for (std::size_t i = 1; i < cores.size(); ++i) CHECK(cores[i - 1].node <= cores[i].node);
}

TEST_CASE("host workers run their GEMMs on their share, the process's OpenBLAS unchanged") {
  ScopedEnv a("OPENBLAS_NUM_THREADS", nullptr), b("OMP_NUM_THREADS", nullptr),
      c("NUBO_CPU_BIND", nullptr);
  const int own_before = detail::openblas().get_num_threads();
  const int budget = static_cast<int>(detail::allowed_cores().size());
  for (int k : {1, 2, 3}) {
    INFO(k << " workers");
    Team team(nubo_test::host_workers(k));
    // Under the sanitizers there are no private copies: the process's own OpenBLAS, unchanged.
    const int expected = k == 1 || !kPrivateCopies ? own_before : std::max(1, budget / k);
    for (int i = 0; i < k; ++i) {
      CHECK(team.worker(i).host_threads() == expected);
      CHECK(team.worker(i).cpus().empty());
    }
    // The GEMMs work on the copies: a product every worker checks.
    nubo_test::RankChecks checks;
    team.run([&](Worker& w) {
      auto x = w.alloc<float>(64 * 64);
      auto y = w.alloc<float>(64 * 64);
      auto z = w.alloc<float>(64 * 64);
      w.fill(x, 1.0);
      w.fill(y, 2.0);
      w.gemm({.m = 64, .n = 64, .k = 64}, x, y, z);
      std::vector<float> host(64 * 64);
      z.read(host);
      RANK_EXPECT(checks, w, host[0] == 128.0f && host.back() == 128.0f);
    });
    checks.report();
    CHECK(detail::openblas().get_num_threads() == own_before);
  }
  // The thread variables are the budget: 4 threads for 2 workers is 2 each, on a private copy
  // (the process's own, under the sanitizers, with its count unchanged).
  ScopedEnv d("OPENBLAS_NUM_THREADS", "4");
  Team team(nubo_test::host_workers(2));
  CHECK(team.worker(0).host_threads() == (kPrivateCopies ? 2 : own_before));
  CHECK(detail::openblas().get_num_threads() == own_before);
}

TEST_CASE("TeamOptions::gemm_threads is the process's GEMM threads, over the thread variables") {
  ScopedEnv a("OPENBLAS_NUM_THREADS", "1"), c("NUBO_CPU_BIND", nullptr);
  const int own_before = detail::openblas().get_num_threads();
  TeamOptions o;
  o.gemm_threads = 6;
  Team team(nubo_test::host_workers(2), o);
  for (int i = 0; i < 2; ++i)
    CHECK(team.worker(i).host_threads() == (kPrivateCopies ? 3 : own_before));
  for (int bad : {-1, 4097}) {
    o.gemm_threads = bad;
    CHECK_THROWS_WITH(Team(nubo_test::host_workers(2), o),
                      Catch::Contains("TeamOptions::gemm_threads must be between 0"));
  }
}

TEST_CASE("cpu_bind pins each worker to its own CPUs while it runs") {
  const auto cores = detail::allowed_cores();
  const int k = static_cast<int>(std::min<std::size_t>(cores.size(), 2));
  TeamOptions o;
  o.cpu_bind = true;
  Team team(nubo_test::host_workers(k), o);
  std::vector<std::vector<int>> seen(static_cast<std::size_t>(k));
  team.run([&](Worker& w) {
    cpu_set_t set;
    CPU_ZERO(&set);
    sched_getaffinity(0, sizeof set, &set);
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &set)) seen[static_cast<std::size_t>(w.local_rank())].push_back(c);
  });
  std::vector<int> all;
  for (int i = 0; i < k; ++i) {
    CHECK(!team.worker(i).cpus().empty());
    CHECK(seen[static_cast<std::size_t>(i)] == team.worker(i).cpus());
    all.insert(all.end(), seen[static_cast<std::size_t>(i)].begin(),
               seen[static_cast<std::size_t>(i)].end());
  }
  std::sort(all.begin(), all.end());
  CHECK(std::adjacent_find(all.begin(), all.end()) == all.end());  // no CPU is shared
  // The calling thread is not pinned by a run.
  cpu_set_t set;
  CPU_ZERO(&set);
  sched_getaffinity(0, sizeof set, &set);
  CHECK(CPU_COUNT(&set) == static_cast<int>(cores.size()));
}

TEST_CASE("a bad NUBO_CPU_BIND names the variable") {
  ScopedEnv e("NUBO_CPU_BIND", "yes");
  CHECK_THROWS_WITH(Team(nubo_test::host_workers(1)), Catch::Contains("NUBO_CPU_BIND"));
}
