// The links between processes (process_links.hpp): shared memory on one host, every collective
// bit-exact across sizes of several chunks; two "hosts" on this machine (their own NUBO_HOST_ID
// and loopback address) reducing host by host; a process killed mid-collective, and segments
// left by dead jobs, never joined and never left behind; and a real mpirun starting the job.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <catch2/catch.hpp>

#include "skip.hpp"

#include <filesystem>

#include "common/process_alive.hpp"
#include "parallel/links/gloo_link.hpp"
#include "parallel/links/process_links.hpp"
#include "parallel/links/shm_link.hpp"
#include "parallel/links/shm_segment.hpp"
#include "peer_job.hpp"

using namespace nubo;
using namespace nubo::test;
using namespace std::chrono_literals;

namespace {

// nubo's segments in /dev/shm made by one of `pids` (nubo-<pid>-...).
std::vector<std::string> segments_of(const std::vector<pid_t>& pids) {
  std::vector<std::string> found;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/dev/shm", ec)) {
    const std::string name = e.path().filename().string();
    long pid = 0;
    std::uint64_t started = 0;
    if (!parallel::parse_segment_name(name, pid, started)) continue;
    for (pid_t p : pids)
      if (pid == p) found.push_back(name);
  }
  return found;
}

std::vector<pid_t> pids_of(const Job& job) {
  std::vector<pid_t> pids;
  for (const auto& p : job.procs) pids.push_back(p.pid());
  return pids;
}

// A pid that no process has now: a child that has exited and been reaped.
pid_t dead_pid() {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  int status = 0;
  ::waitpid(child, &status, 0);
  return child;
}

// Makes /dev/shm/<name> holding `bytes` of 0x5a, as a crashed job would have left it.
void plant_segment(const std::string& name, std::size_t bytes) {
  const int fd = ::shm_open(("/" + name).c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
  REQUIRE(fd >= 0);
  REQUIRE(::ftruncate(fd, static_cast<off_t>(bytes)) == 0);
  std::vector<char> junk(bytes, 0x5a);
  REQUIRE(::write(fd, junk.data(), bytes) == static_cast<ssize_t>(bytes));
  ::close(fd);
}

bool exists_in_shm(const std::string& name) {
  return std::filesystem::exists("/dev/shm/" + name);
}

}  // namespace

TEST_CASE("every collective across 2 and 3 processes through shared memory, bit-exact") {
  for (int n : {2, 3}) {
    INFO(n << " processes");
    TempDir where;
    Job job(n, file_rendezvous(where), {"collectives", "1", "-", "large"});
    require_success(job, job.finish(300s));
    CHECK(segments_of(pids_of(job)).empty());
  }
}

TEST_CASE("two hosts of two processes each reduce host by host, bit-exact") {
  if (!parallel::have_gloo()) {
    NUBO_SKIP("this build has no Gloo (Debian libgloo-dev)");
  }
  // Hosts "a" and "b", each with an address of its own on the loopback network; the reference
  // sums each host's ranks, then the hosts'. Three processes: hosts of 2 and 1.
  for (const std::vector<int>& hosts : {std::vector<int>{2, 2}, std::vector<int>{2, 1}}) {
    const int n = hosts[0] + hosts[1];
    INFO(n << " processes");
    TempDir where;
    const std::string groups = std::to_string(hosts[0]) + "," + std::to_string(hosts[1]);
    Job job(n, file_rendezvous(where), {"collectives", "1", groups}, {}, [&](int r) {
      const bool first = r < hosts[0];
      return std::vector<std::string>{
          std::string("NUBO_HOST_ID=") + (first ? "host-a" : "host-b"),
          std::string("NUBO_ADDRESS=") + (first ? "127.0.0.2" : "127.0.0.3")};
    });
    require_success(job, job.finish(300s));
    CHECK(segments_of(pids_of(job)).empty());
  }
}

TEST_CASE("killing a process mid all-reduce in shared memory fails the others, naming it") {
  // Rank 1 (a member) and rank 0 (the segment's creator) in turn.
  for (int victim : {1, 0}) {
    INFO("killing rank " << victim);
    TempDir where;
    Job job(3, file_rendezvous(where), {"loop", where.path}, {"NUBO_TIMEOUT=20"});
    for (int r = 0; r < 3; ++r) REQUIRE(wait_for_file(where.path + "/" + std::to_string(r), 60s));
    job.procs[static_cast<std::size_t>(victim)].signal(SIGKILL);
    // Within the timeout (20 s), with room for a loaded machine; the dead rank is seen within
    // milliseconds.
    auto statuses = job.finish(40s);
    CHECK(WIFSIGNALED(statuses[static_cast<std::size_t>(victim)]));
    for (int r = 0; r < 3; ++r) {
      if (r == victim) continue;
      const auto out = job.procs[static_cast<std::size_t>(r)].output();
      INFO("rank " << r << " " << status_text(statuses[static_cast<std::size_t>(r)]) << ": "
                   << out);
      CHECK((WIFEXITED(statuses[static_cast<std::size_t>(r)]) &&
             WEXITSTATUS(statuses[static_cast<std::size_t>(r)]) == 3));
      CHECK_THAT(out, Catch::Contains("all_reduce(avg) of 1048576 x f32") &&
                          Catch::Contains("rank " + std::to_string(victim) + " is gone"));
    }
    CHECK(segments_of(pids_of(job)).empty());
  }
}

TEST_CASE("a stale segment is removed, never joined, and a live process's is left alone") {
  // Left by a job whose creator died before everyone attached: its creator pid is gone.
  const std::string stale = "nubo-" + std::to_string(dead_pid()) + "-12345-0123456789abcdef";
  plant_segment(stale, 4096);
  // Named as if this test process made it: alive, so not stale.
  const std::string live = "nubo-" + std::to_string(::getpid()) + "-" +
                           std::to_string(proc::start_time(::getpid())) + "-fedcba9876543210";
  plant_segment(live, 4096);
  TempDir where;
  Job job(2, file_rendezvous(where), {"collectives"});
  require_success(job, job.finish(120s));
  CHECK_FALSE(exists_in_shm(stale));
  CHECK(exists_in_shm(live));
  ::shm_unlink(("/" + live).c_str());
  // Opening checks who made a segment and its size before anything is read from it.
  const std::string other = "nubo-1-1-00000000000000aa";
  CHECK_THROWS_WITH(parallel::ShmSegment::open(other, 2, 4096),
                    Catch::Contains("not one that process 2 made"));
  auto made = parallel::ShmSegment::create(8192);
  CHECK_THROWS_WITH(parallel::ShmSegment::open(made.name(), ::getpid(), 4096),
                    Catch::Contains("holds 8192 bytes, not the 4096"));
  made.unlink();
  CHECK_THROWS_WITH(parallel::ShmSegment::open(made.name(), ::getpid(), 8192),
                    Catch::Contains("cannot open"));
}

TEST_CASE("segment names and process liveness") {
  long pid = 0;
  std::uint64_t started = 0;
  CHECK(parallel::parse_segment_name("nubo-42-777-0123456789abcdef", pid, started));
  CHECK(pid == 42);
  CHECK(started == 777);
  for (const char* bad :
       {"nubo-42-777", "nubo-x-777-0123456789abcdef", "other-42-7-0123456789abcdef",
        "nubo-42-777-0123456789ABCDEF", "nubo-42-777-01234"})
    CHECK_FALSE(parallel::parse_segment_name(bad, pid, started));
  CHECK(proc::alive(::getpid(), proc::start_time(::getpid())));
  CHECK_FALSE(proc::alive(::getpid(), proc::start_time(::getpid()) + 1));  // a reused pid
  CHECK(proc::start_time(dead_pid()) == 0);
  CHECK_FALSE(proc::alive(-1, 1));
}

TEST_CASE("processes are grouped by host in the order of their first rank") {
  std::vector<parallel::ProcessInfo> all(5);
  const char* ids[] = {"b", "a", "b", "c", "a"};
  for (int r = 0; r < 5; ++r) all[static_cast<std::size_t>(r)].host_id = ids[r];
  const auto l = parallel::host_layout(all, 4);
  CHECK(l.hosts == std::vector<std::vector<int>>{{0, 2}, {1, 4}, {3}});
  CHECK(l.host == 1);
  CHECK(l.member == 1);
  CHECK(l.world == 5);
}

TEST_CASE("the shared-memory chunk keeps the slots within 16 MiB") {
  CHECK(parallel::shm_chunk_bytes(2) == 512 * 1024);
  CHECK(parallel::shm_chunk_bytes(64) * 2 * 65 <= std::size_t{16} << 20);
  CHECK(parallel::shm_chunk_bytes(100000) == 16 * 1024);
}

TEST_CASE("a job that mpirun starts joins with no variable of nubo's") {
  const std::string mpirun = find_program("mpirun");
  if (mpirun.empty()) {
    NUBO_SKIP("mpirun is not installed (Debian openmpi-bin; .ci/install-deps installs it)");
  }
  TempDir where;
  // Open MPI refuses root without --allow-run-as-root; --oversubscribe lets 2 processes run on
  // a machine with fewer cores Open MPI counts as slots.
  Child run(
      {mpirun, "--allow-run-as-root", "--oversubscribe", "-np", "2", NUBO_PEER_PATH, "collectives"},
      {"NUBO_RANK=", "NUBO_LOCAL_RANK=", "NUBO_WORLD_SIZE=", "NUBO_RENDEZVOUS=",
       "NUBO_SIM_DEVICES=", "NUBO_TIMEOUT=60", "OMPI_MCA_plm_rsh_agent="},
      where.path + "/out");
  const auto status = run.wait(180s);
  if (!status) run.signal(SIGKILL);
  INFO(run.output());
  REQUIRE(status);
  CHECK((WIFEXITED(*status) && WEXITSTATUS(*status) == 0));
  CHECK_THAT(run.output(), Catch::Contains("rank 0 of 2 (mpirun): 1 workers of 2 checked") &&
                               Catch::Contains("rank 1 of 2 (mpirun): 1 workers of 2 checked"));
}
