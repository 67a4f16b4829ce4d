// Every collective, for every type and op, on teams of 1, 2, 3 and 8 workers of the host CPU
// and of simulated GPUs, compared bit for bit with the one-thread reference.
#include <catch2/catch.hpp>

#include <mutex>

#include "check_collectives.hpp"
#include "nubo/device.hpp"
#include "nubo/parallel.hpp"
#include "parallel/links/reduce.hpp"
#include "workers.hpp"

using namespace nubo;

namespace {

using nubo_test::host_workers;
using nubo_test::sim_workers;

void check_team(const std::vector<Device>& devices) {
  Team team(devices, TeamOptions{std::chrono::seconds(30)});
  REQUIRE(team.size() == static_cast<int>(devices.size()));
  std::mutex mutex;
  std::vector<std::string> problems;
  team.run([&](Worker& w) {
    auto found = test::check_all_collectives(w);
    std::lock_guard<std::mutex> lock(mutex);
    problems.insert(problems.end(), found.begin(), found.end());
  });
  for (const auto& p : problems) FAIL_CHECK(p);
  CHECK(problems.empty());
}

}  // namespace

TEST_CASE("collectives on host teams match the one-thread reference bit for bit") {
  for (int n : {1, 2, 3, 8}) {
    INFO(n << " host workers");
    check_team(host_workers(n));
  }
}

TEST_CASE("collectives on simulated GPUs match the one-thread reference bit for bit") {
  for (int n : {1, 2, 3, 8}) {
    INFO(n << " sim workers");
    check_team(sim_workers(n));
  }
}

TEST_CASE("a reduction in two stages: only avg differs, and it is split in one place") {
  using nubo::parallel::staged;
  for (auto op : {ReduceOp::sum, ReduceOp::max, ReduceOp::min}) {
    const auto s = staged(op, false);
    CHECK((s.first == op && s.last == op && !s.divide));
  }
  // Several workers per process: both stages sum, the team size divides at the end.
  const auto parts = staged(ReduceOp::avg, false);
  CHECK((parts.first == ReduceOp::sum && parts.last == ReduceOp::sum && parts.divide));
  // One worker per process: the processes average in one pass (f16 and bf16 rounded once).
  const auto alone = staged(ReduceOp::avg, true);
  CHECK((alone.first == ReduceOp::sum && alone.last == ReduceOp::avg && !alone.divide));
}
