// The queue planner: schedules worked out by hand on a catalog of round numbers, the exact and
// heuristic methods against each other on generated queues, the what-if of one more reservation,
// job files, re-planning from now, and bad queue files.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "../transfer/helpers.hpp"
#include "common/small_file.hpp"
#include "cost/schedule/schedule_model.hpp"
#include "cost_helpers.hpp"
#include "error_of.hpp"
#include "nubo/error.hpp"
#include "nubo/schedule.hpp"
#include "skip.hpp"

namespace nc = nubo::cost;

namespace {

// One "box" (8 x A100-80GB) does 8 x 312 TFLOP/s x 0.4 = 998.4 TFLOP/s of bf16 work: a job of
// `hours` is hours x 3.594e18 FLOPs. On demand $10/h in r1, spot $1/h; "slow" (8 x V100) is
// cheaper per hour ($4) and about 3.5 times slower.
nc::Catalog catalog() {
  auto c = cost_test::box_catalog();
  c.load_text(
      "provider,instance,region,gpu_model,gpus,interconnect,vcpus,memory_gib,network_gbps,"
      "on_demand,spot\n"
      "aws,slow,r1,V100-SXM2-32GB,8,nvlink,64,488,25,4,\n",
      "slow.csv");
  return c;
}

nc::QueueJob job(const std::string& name, double hours, double release_h, double deadline_h) {
  nc::QueueJob j;
  j.name = name;
  j.workload.total_flops = hours * 8 * 312e12 * 0.4 * 3600;
  j.workload.name = name;
  j.release_h = release_h;
  j.deadline_h = deadline_h;
  j.region = "r1";
  return j;
}

nc::Reservation box_reservation(int count, double hourly = 6) {
  nc::Reservation r;
  r.instance = "box";
  r.region = "r1";
  r.count = count;
  r.hourly = hourly;
  return r;
}

const nc::ScheduledJob& find(const nc::Schedule& s, const std::string& name) {
  for (const auto& j : s.jobs)
    if (j.name == name) return j;
  FAIL("no job " << name);
  throw;
}

nc::ScheduleOptions hourly_grid(nc::ScheduleMethod method = nc::ScheduleMethod::exact) {
  nc::ScheduleOptions o;
  o.method = method;
  o.slot_h = 1;
  return o;
}

}  // namespace

TEST_CASE("two jobs want the one reservation: the one dearer on demand keeps it", "[schedule]") {
  // Only one of them fits on the reservation by the 5 h deadline. a on demand would cost $40, b
  // $30: the cheapest schedule keeps a on the reservation and sends b to the cloud.
  nc::Queue q;
  q.horizon_h = 10;
  q.reservations = {box_reservation(1)};
  q.jobs = {job("a", 4, 0, 5), job("b", 3, 0, 5)};
  for (auto method : {nc::ScheduleMethod::exact, nc::ScheduleMethod::heuristic}) {
    const auto s = nc::schedule(catalog(), q, hourly_grid(method));
    INFO(nc::schedule_method_name(method));
    CHECK(find(s, "a").placement == nc::Placement::reserved);
    CHECK(find(s, "a").cost == 0);
    CHECK(find(s, "a").start_h == 0);
    const auto& b = find(s, "b");
    CHECK(b.placement == nc::Placement::on_demand);
    CHECK(b.estimate.instance == "box");  // "slow" would end at 10.5 h, past the deadline
    CHECK(b.cost == Approx(30).margin(0.5));
    CHECK_THAT(b.reason, Catch::Contains("capacity") && Catch::Contains("taken by a"));
    CHECK(s.costs.on_demand == Approx(b.cost));
    CHECK(s.costs.committed_used + s.costs.committed_idle == Approx(60));  // 10 h x $6
    CHECK(s.costs.committed_used == Approx(24));                           // a's 4 h
    CHECK(s.unplaced() == 0);
  }
}

TEST_CASE("a deadline moves a job off its cheapest offer, and says so", "[schedule]") {
  // 40 h of work checkpointing 10 GB, interrupted every 2 h on spot: spot's expected run is
  // 50.9 h for $51 (7.7 h of rework), on demand 41.0 h for $409.64. A 42 h deadline leaves on
  // demand; 200 h leaves spot.
  nc::Queue q;
  q.horizon_h = 200;
  auto spot_job = job("checkpointed", 40, 0, 42);
  spot_job.interruptible = true;
  spot_job.workload.checkpoint_bytes = 10e9;
  q.jobs = {spot_job};
  auto o = hourly_grid();
  o.request.spot_mtbi_s = 2 * 3600;  // interruptions every 2 h: rework pushes spot past 42 h
  const auto s = nc::schedule(catalog(), q, o);
  const auto& j = find(s, "checkpointed");
  REQUIRE(j.placement == nc::Placement::on_demand);
  CHECK(j.cost == Approx(409.64).margin(1.5));
  CHECK_THAT(j.reason, Catch::Contains("deadline") && Catch::Contains("box x1 spot") &&
                           Catch::Contains("rework"));
  // The same job with time to spare goes to spot, and nothing needs explaining.
  q.jobs[0].deadline_h = 200;
  const auto relaxed = nc::schedule(catalog(), q, o);
  CHECK(find(relaxed, "checkpointed").placement == nc::Placement::spot);
  CHECK(find(relaxed, "checkpointed").reason.empty());
  // Without checkpoints, every interruption loses all the work so far: a 40 h job interrupted
  // every 2 h would take years on spot, so spot is no option, and the schedule says why.
  q.jobs[0].workload.checkpoint_bytes = 0;
  const auto no_checkpoints = nc::schedule(catalog(), q, o);
  CHECK(find(no_checkpoints, "checkpointed").placement == nc::Placement::on_demand);
  CHECK_THAT(find(no_checkpoints, "checkpointed").reason,
             Catch::Contains("interruption rate: not on spot") &&
                 Catch::Contains("over 10 times its work") && Catch::Contains("--checkpoint-size"));
  // Interrupted less often, it would finish on spot, but at half the on-demand price its rework
  // makes it cost more than on demand.
  o.request.spot_mtbi_s = 30 * 3600;
  auto dear_spot = nc::Catalog::empty();
  dear_spot.load_text(
      "provider,instance,region,gpu_model,gpus,interconnect,vcpus,memory_gib,network_gbps,"
      "on_demand,spot\n"
      "aws,box,r1,A100-SXM4-80GB,8,nvswitch,96,1152,400,10,5\n",
      "dear_spot.csv");
  const auto costlier = nc::schedule(dear_spot, q, o);
  CHECK(find(costlier, "checkpointed").placement == nc::Placement::on_demand);
  CHECK_THAT(find(costlier, "checkpointed").reason,
             Catch::Contains("interruption rate") && Catch::Contains("more than on demand"));
}

TEST_CASE("idle reserved hours make a short job free", "[schedule]") {
  nc::Queue q;
  q.horizon_h = 48;
  q.reservations = {box_reservation(2, 5)};
  q.jobs = {job("long", 30, 0, 40), job("short", 2, 10, 20)};
  const auto s = nc::schedule(catalog(), q, hourly_grid());
  CHECK(find(s, "short").placement == nc::Placement::reserved);
  CHECK(find(s, "short").cost == 0);
  CHECK(find(s, "short").start_h == 10);
  CHECK(s.costs.on_demand == 0);
  CHECK(s.costs.committed_used + s.costs.committed_idle == Approx(2 * 48 * 5));
  CHECK(s.costs.committed_used == Approx((30 + 2) * 5));
  CHECK(s.optimal);
  CHECK(s.gap == 0);
  // The fleet: two reserved boxes while both run, one after.
  REQUIRE(s.fleet.size() == 1);
  CHECK(s.fleet[0].kind == "box r1 reserved");
  CHECK(s.fleet[0].count[5] == 1);
  CHECK(s.fleet[0].count[11] == 2);
  CHECK(s.fleet[0].count[35] == 0);
}

TEST_CASE("a queue no schedule can meet is explained job by job", "[schedule]") {
  nc::Queue q;
  q.horizon_h = 20;
  auto too_big = job("too-big", 1, 0, 10);
  too_big.workload.memory_per_gpu_bytes = 500e9;  // no GPU holds 500 GB
  q.jobs = {job("too-late", 5, 0, 3), too_big, job("fine", 1, 0, 10)};
  const auto s = nc::schedule(catalog(), q, hourly_grid());
  CHECK(s.unplaced() == 2);
  CHECK_THAT(find(s, "too-late").reason,
             Catch::Contains("nothing finishes by its deadline at 3.0 h") &&
                 Catch::Contains("the fastest, box x1 on-demand") && Catch::Contains("5.0 h"));
  CHECK_THAT(find(s, "too-big").reason, Catch::Contains("no offer can run it"));
  CHECK(find(s, "fine").placement == nc::Placement::on_demand);
}

TEST_CASE(
    "two jobs only a reservation can run, one slot for them: the other is told who holds "
    "it",
    "[schedule]") {
  // On the model itself: jobs whose only way is the one reserved instance (no cloud offer in
  // time), which has room for one of them.
  namespace sd = nc::schedule_detail;
  const auto c = catalog();
  sd::Model m;
  m.slots = 10;
  m.horizon_h = 10;
  m.pools = {{0, &c.get("box", "r1"), 6, std::vector<int>(10, 1)}};
  for (int j = 0; j < 2; ++j) {
    sd::JobWays w;
    w.release_h = 0;
    w.deadline_h = 9;
    w.reserved = {{0, 1, 8, 0, 1, {}}};
    m.jobs.push_back(w);
  }
  nc::Queue q;
  q.reservations = {box_reservation(1)};
  q.jobs = {job("first", 8, 0, 9), job("second", 8, 0, 9)};
  const auto solved = sd::solve_exact(m, 10, nullptr);
  CHECK(solved.optimal);
  const auto s = sd::assemble(m, q, solved);
  CHECK(s.unplaced() == 1);
  const auto& left = s.jobs[0].placement == nc::Placement::unplaced ? s.jobs[0] : s.jobs[1];
  const auto& holder = s.jobs[0].placement == nc::Placement::unplaced ? s.jobs[1] : s.jobs[0];
  CHECK_THAT(left.reason, Catch::Contains("capacity: only the reservations finish it") &&
                              Catch::Contains(holder.name + " hold them"));
}

TEST_CASE(
    "exact and heuristic on 20 generated queues: the optimum is never worse, and the "
    "heuristic's stated gap is never exceeded",
    "[schedule]") {
  std::mt19937 rng(20261204);
  const auto c = catalog();
  for (int round = 0; round < 20; ++round) {
    nc::Queue q;
    q.horizon_h = 48;
    q.reservations = {box_reservation(1 + round % 3)};
    const int jobs = 8 + round % 7;
    for (int i = 0; i < jobs; ++i) {
      const double hours = std::uniform_real_distribution<double>(1, 12)(rng);
      const double release = std::uniform_int_distribution<int>(0, 24)(rng);
      const double deadline =
          std::min(48.0, release + hours * std::uniform_real_distribution<double>(1.2, 3)(rng));
      std::string name = "j";  // appended: GCC 12 warns falsely on "j" + to_string
      name += std::to_string(i);
      auto j = job(name, hours, release, deadline);
      j.interruptible = i % 3 == 0;
      j.max_nodes = i % 4 == 0 ? 2 : 1;
      q.jobs.push_back(j);
    }
    const auto exact = nc::schedule(c, q, hourly_grid(nc::ScheduleMethod::exact));
    const auto heuristic = nc::schedule(c, q, hourly_grid(nc::ScheduleMethod::heuristic));
    INFO("round " << round << ": exact " << exact.costs.total() << ", heuristic "
                  << heuristic.costs.total() << " (gap " << heuristic.gap << ")");
    REQUIRE(exact.optimal);
    CHECK(exact.unplaced() == heuristic.unplaced());
    CHECK(exact.costs.total() <= heuristic.costs.total() + 1e-6);
    const double actual = (heuristic.costs.total() - exact.costs.total()) / heuristic.costs.total();
    CHECK(actual <= heuristic.gap + 1e-9);
    CHECK(heuristic.bound <= exact.costs.total() + 1e-6);
  }
}

TEST_CASE("an exact program too large for memory is refused, or left to the heuristic",
          "[schedule]") {
  // A year in 1 h slots: 30 jobs of 100 h that may start almost anywhere would take tens of
  // millions of coefficients.
  nc::Queue q;
  q.horizon_h = 8760;
  q.reservations = {box_reservation(1)};
  for (int i = 0; i < 30; ++i) {
    std::string name = "long-";  // appended: GCC 12 warns falsely on "long-" + to_string
    name += std::to_string(i);
    q.jobs.push_back(job(name, 100, 0, 8760));
  }
  CHECK_THROWS_WITH(
      nc::schedule(catalog(), q, hourly_grid(nc::ScheduleMethod::exact)),
      Catch::Contains("the exact program would hold") && Catch::Contains("give a larger slot"));
  const auto s = nc::schedule(catalog(), q, hourly_grid(nc::ScheduleMethod::automatic));
  CHECK(s.method == nc::ScheduleMethod::heuristic);
  REQUIRE_FALSE(s.notes.empty());
  CHECK_THAT(s.notes.back(), Catch::Contains("too large"));
  CHECK(s.unplaced() == 0);
}

TEST_CASE("one more reservation is priced, and the difference reported", "[schedule]") {
  nc::Queue q;
  q.horizon_h = 24;
  q.reservations = {box_reservation(1, 6)};
  q.jobs = {job("a", 20, 0, 22), job("b", 20, 0, 22)};
  const auto without = nc::schedule(catalog(), q, hourly_grid());
  // One of the two (equal: either) on the box, the other $200 on demand.
  CHECK((find(without, "a").placement == nc::Placement::on_demand) !=
        (find(without, "b").placement == nc::Placement::on_demand));
  // A second box at $6/h for the day costs $144 and takes the other: $56 saved.
  const auto w = nc::what_if(catalog(), q, without, box_reservation(1, 6), hourly_grid());
  CHECK(find(w.schedule, "a").placement == nc::Placement::reserved);
  CHECK(find(w.schedule, "b").placement == nc::Placement::reserved);
  CHECK(w.saving == Approx(200 - 144).margin(0.5));
  // From a --reserve spec, at the catalog's own 1-year price.
  const auto r = nc::parse_reservation("box@r1=1:1y");
  CHECK(r.instance == "box");
  CHECK(r.region == "r1");
  CHECK(r.count == 1);
  CHECK(r.term == nc::Pricing::reserved_1y);
  const auto priced = nc::what_if(catalog(), q, without, r, hourly_grid());
  CHECK(priced.schedule.costs.committed_used + priced.schedule.costs.committed_idle ==
        Approx(24 * 6 + 24 * catalog().get("box", "r1").reserved_1y));
}

TEST_CASE(
    "re-planning from now: finished jobs go, failed ones start again, running ones hold "
    "their reservation",
    "[schedule]") {
  nc::Queue q;
  q.horizon_h = 48;
  q.reservations = {box_reservation(1)};
  q.jobs = {job("done", 4, 0, 40), job("running", 10, 0, 40), job("failed", 3, 0, 40),
            job("waiting", 5, 0, 40)};
  const auto first = nc::schedule(catalog(), q, hourly_grid());
  REQUIRE(find(first, "running").placement == nc::Placement::reserved);
  const auto update = nc::parse_queue_update(R"({"now": 12, "jobs": [
      {"name": "done", "state": "finished", "runtime": 4},
      {"name": "running", "state": "running", "started": 4, "progress": 0.5},
      {"name": "failed", "state": "failed", "runtime": 1}]})",
                                             "update.json");
  const auto next = nc::apply_updates(q, first, update);
  REQUIRE(next.jobs.size() == 2);  // failed and waiting
  CHECK(next.now_h == 12);
  REQUIRE(next.held.size() == 1);
  CHECK(next.held[0].until_h == Approx(20));  // 8 h for half: 8 more
  const auto s = nc::schedule(catalog(), next, hourly_grid());
  for (const auto& j : s.jobs) {
    CHECK(j.start_h >= 12);
    if (j.placement == nc::Placement::reserved) CHECK(j.start_h >= 20);  // after "running"
  }
  using Catch::Contains;
  CHECK_THROWS_WITH(nc::apply_updates(q, first,
                                      nc::parse_queue_update(
                                          R"({"now": 1, "jobs": [{"name": "x",
                                                    "state": "finished"}]})",
                                          "u.json")),
                    Contains("job 'x' is not in the queue"));
  CHECK_THROWS_WITH(nc::parse_queue_update(R"({"now": 1, "jobs": [{"name": "a",
                                           "state": "running"}]})",
                                           "u.json"),
                    Contains("job 'a': a running job needs its progress"));
}

TEST_CASE("queue files: every field read, and bad ones named by job and field", "[schedule]") {
  const auto q = nc::parse_queue(R"({
    "horizon": "30d",
    "reservations": [{"instance": "box", "region": "r1", "count": 2, "until": "10d",
                      "hourly": 6, "term": "3y"}],
    "jobs": [{"name": "pretrain", "workload": {"params": "1B", "tokens": "20B", "gpu_memory": "30G"},
              "release": "1d", "deadline": 96, "interruptible": true, "nodes": "1-4",
              "priority": 2, "tag": "research", "gpu": "A100", "provider": "aws",
              "region": "r1", "command": "python train.py", "nubo": true}]})",
                                 "queue.json");
  CHECK(q.horizon_h == 720);
  REQUIRE(q.reservations.size() == 1);
  CHECK(q.reservations[0].until_h == 240);
  CHECK(q.reservations[0].term == nc::Pricing::reserved_3y);
  const auto& j = q.jobs.at(0);
  CHECK(j.release_h == 24);
  CHECK(j.deadline_h == 96);
  CHECK(j.min_nodes == 1);
  CHECK(j.max_nodes == 4);
  CHECK(j.workload.parameters == 1e9);
  CHECK(j.workload.memory_per_gpu_bytes == Approx(30e9).epsilon(0.1));
  CHECK(j.uses_nubo);
  using Catch::Contains;
  const auto refused = [](const std::string& text) {
    return nubo_test::error_of([&] { nc::parse_queue(text, "q.json"); });
  };
  CHECK_THAT(refused(R"({"jobs": [{"name": "a", "workload": {"flops": 1e18}, "release": 10,
                         "deadline": 5}]})"),
             Contains("job 'a': deadline 5") && Contains("is not after its release"));
  CHECK_THAT(refused(R"({"jobs": [{"name": "a", "workload": {"flops": 1e18}}],
                         "reservations": [{"instance": "box", "count": -1}]})"),
             Contains("reservations[0] (box): count") && Contains("not a whole number"));
  CHECK_THAT(refused(R"({"jobs": [{"name": "a", "workload": {"flops": NaN}}]})"),
             Contains("not valid JSON"));
  CHECK_THAT(
      refused(R"({"jobs": [{"name": "a", "workload": {"flops": 1e18}, "deadline": 1e300}]})"),
      Contains("job 'a': deadline") && Contains("out of range"));
  CHECK_THAT(refused(R"({"jobs": [{"name": "a", "workload": {"flops": 1e18}, "nodes": 0}]})"),
             Contains("job 'a': nodes"));
  CHECK_THAT(refused(R"({"jobs": [{"name": "a", "workload": {"flops": 1e18}, "nodes": "1.5-4"}]})"),
             Contains("job 'a': nodes"));
  CHECK_THAT(refused(R"({"jobs": [{"name": "a", "workload": {"flops": 1e18}, "dedline": 5}]})"),
             Contains("unknown field 'dedline'"));
  CHECK_THAT(refused(R"({"jobs": [{"name": "a", "workload": {"flops": 1e18}},
                                  {"name": "a", "workload": {"flops": 1e18}}]})"),
             Contains("job 'a' appears twice"));
  CHECK_THAT(refused(R"({"jobs": [{"name": "../x", "workload": {"flops": 1e18}}]})"),
             Contains("may hold only letters"));
  CHECK_THAT(refused(R"({"jobs": [{"name": "a", "workload": {"params": "7B"}}]})"),
             Contains("job 'a': workload: describe the workload"));
  CHECK_THAT(refused(R"({"jobs": []})"), Contains("at least one job"));
  // An instance the catalog lacks is named with its reservation when the queue is planned.
  nc::Queue unknown;
  unknown.jobs = {job("a", 1, 0, 10)};
  unknown.reservations = {box_reservation(1)};
  unknown.reservations[0].instance = "p9z.huge";
  CHECK_THAT(nubo_test::error_of([&] { nc::schedule(catalog(), unknown); }),
             Contains("reservations[0] (p9z.huge)"));
  CHECK_THAT(nubo_test::error_of([&] { nc::parse_reservation("box=0:1y"); }), Contains("count"));
  CHECK_THAT(nubo_test::error_of([&] { nc::parse_reservation("box=1:2y"); }), Contains("1y or 3y"));
}

TEST_CASE("job files: a SkyPilot task and an sbatch script per placed job, and the order",
          "[schedule]") {
  nubo_test::TempDir dir;
  nc::Queue q;
  q.horizon_h = 48;
  q.reservations = {box_reservation(1)};
  auto a = job("train", 10, 0, 40);
  a.command = "python train.py --epochs 3";
  a.uses_nubo = true;
  a.max_nodes = 1;
  auto b = job("sweep", 6, 2, 40);
  b.interruptible = true;
  b.command = "python sweep.py";
  auto c = job("two-lines", 1, 20, 40);  // after train and sweep: the order below stays
  c.command = "cd /work\necho \"it's done\"";
  c.uses_nubo = true;
  q.jobs = {a, b, c};
  const auto s = nc::schedule(catalog(), q, hourly_grid());
  const auto sky = nc::write_job_files(catalog(), s, q, nc::JobFileFormat::skypilot, dir / "sky");
  REQUIRE(sky.size() == 5);  // three tasks, launch.sh and the README
  // A command of several lines runs whole under nubo-run (bash -c, its quote escaped), and
  // every line of the YAML block stays indented.
  CHECK_THAT(nubo_test::read_file(dir / "sky/two-lines.yaml"),
             Catch::EndsWith("--exclude-unhealthy -- bash -c 'cd /work\n  echo \"it'\\''s "
                             "done\"'\n"));
  const auto train = nubo_test::read_file(dir / "sky/train.yaml");
  CHECK_THAT(train, Catch::Contains("instance_type: \"box\"") &&
                        Catch::Contains("accelerators: \"A100:8\"") &&
                        Catch::Contains("nubo-run --nnodes \"$SKYPILOT_NUM_NODES\"") &&
                        Catch::Contains("-- bash -c 'python train.py --epochs 3'"));
  const auto readme = nubo_test::read_file(dir / "sky/README.md");
  CHECK_THAT(readme, Catch::Contains("| 1 | train |"));
  const auto slurm = nc::write_job_files(catalog(), s, q, nc::JobFileFormat::slurm, dir / "slurm");
  const auto script = nubo_test::read_file(dir / "slurm/sweep.sbatch");
  const auto& sweep = find(s, "sweep");
  const auto begin = std::to_string(static_cast<int>(sweep.start_h * 60));
  CHECK_THAT(script,
             Catch::Contains("#SBATCH --nodes=1") &&
                 Catch::Contains("#SBATCH --gpus-per-node=a100:8") &&
                 Catch::Contains("#SBATCH --time=0-07:22:00") &&  // 6 h x 1.2 + 10 min
                 Catch::Contains("#SBATCH --begin=now+" + begin + "minutes") &&
                 Catch::Contains("#SBATCH --requeue") &&
                 Catch::Contains("srun bash -c 'python sweep.py'"));
  CHECK_THROWS_WITH(nc::parse_job_file_format("nomad"),
                    Catch::Contains("skypilot, slurm or kubernetes"));
  CHECK_THROWS_AS(
      nc::write_job_files(catalog(), s, q, nc::JobFileFormat::slurm, dir / "sky/train.yaml"),
      nubo::Error);
}

TEST_CASE("job files run as written: setup, folder, partition, reservation and fixed start times",
          "[schedule]") {
  nubo_test::TempDir dir;
  auto q = nc::parse_queue(R"({
    "start": "2026-12-08T09:00Z",
    "reservations": [{"instance": "box", "region": "r1", "count": 1, "hourly": 6,
                      "name": "cr-0123abcd"}],
    "jobs": [
      {"name": "train", "workload": {"flops": 9e18}, "deadline": "40h", "region": "r1",
       "command": "python train.py", "setup": "pip install -r requirements.txt",
       "workdir": "~/project", "partition": "gpu-a100"},
      {"name": "later", "workload": {"flops": 9e18}, "release": "20h", "deadline": "40h",
       "region": "r1", "interruptible": true, "command": "python later.py"}]})",
                           "queue.json");
  CHECK(q.start == "2026-12-08T09:00:00Z");
  const auto s = nc::schedule(catalog(), q, hourly_grid());
  REQUIRE(find(s, "train").placement == nc::Placement::reserved);
  nc::write_job_files(catalog(), s, q, nc::JobFileFormat::slurm, dir / "slurm");
  const auto train = nubo_test::read_file(dir / "slurm/train.sbatch");
  CHECK_THAT(train, Catch::Contains("#SBATCH --partition=gpu-a100\n") &&
                        Catch::Contains("#SBATCH --reservation=cr-0123abcd\n") &&
                        Catch::Contains("#SBATCH --chdir=~/project\n") &&
                        Catch::Contains("srun --ntasks-per-node=1 bash -c 'pip install -r "
                                        "requirements.txt'\nsrun bash -c 'python train.py'"));
  // Every job is submitted at once, each held by Slurm until its own start: 09:00 UTC plus its
  // hour, whatever the time zone of the machine that submits.
  const auto submit = nubo_test::read_file(dir / "slurm/submit.sh");
  const auto later_at = 1796720400LL + static_cast<long long>(find(s, "later").start_h * 3600);
  CHECK_THAT(submit, Catch::Contains("sbatch --begin=\"$(date -d @1796720400 +%Y-%m-%dT%H:%M:%S)\" "
                                     "'train.sbatch'") &&
                         Catch::Contains("date -d @" + std::to_string(later_at)));
  CHECK(std::system(("bash -n '" + (dir / "slurm/submit.sh") + "'").c_str()) == 0);
  nc::write_job_files(catalog(), s, q, nc::JobFileFormat::skypilot, dir / "sky");
  const auto task = nubo_test::read_file(dir / "sky/train.yaml");
  CHECK_THAT(task, Catch::Contains("workdir: \"~/project\"") &&
                       Catch::Contains("setup: |2\n  pip install -r requirements.txt\n") &&
                       Catch::Contains("config:\n  aws:\n    specific_reservations:\n      - "
                                       "\"cr-0123abcd\""));
  const auto launch = nubo_test::read_file(dir / "sky/launch.sh");
  CHECK_THAT(launch, Catch::Contains("t0=1796720400\n") &&
                         Catch::Contains("at 0; sky jobs launch --yes --detach-run 'train.yaml'"));
  CHECK(std::system(("bash -n '" + (dir / "sky/launch.sh") + "'").c_str()) == 0);
  // Bad values are refused where the queue is read, naming the field.
  using Catch::Contains;
  const auto bad = [](const std::string& json) {
    return nubo_test::error_of([&] { nc::parse_queue(json, "q.json"); });
  };
  CHECK_THAT(bad(R"({"start": "tomorrow", "jobs": [{"name": "a", "workload": {"flops": 1e18}}]})"),
             Contains("q.json: start: 'tomorrow': a UTC time"));
  CHECK_THAT(
      bad(R"({"start": "2026-12-08T09:00", "jobs": [{"name": "a", "workload": {"flops": 1e18}}]})"),
      Contains("a UTC time"));
  CHECK_THAT(
      bad(R"({"jobs": [{"name": "a", "workload": {"flops": 1e18}, "partition": "gpu; rm -rf /"}]})"),
      Contains("job 'a': partition") && Contains("only letters, digits"));
  CHECK_THAT(bad(R"({"jobs": [{"name": "a", "workload": {"flops": 1e18}, "workdir": "a b"}]})"),
             Contains("job 'a': workdir"));
  CHECK_THAT(
      bad(R"({"reservations": [{"instance": "box", "name": "x y"}], "jobs": [{"name": "a", "workload": {"flops": 1e18}}]})"),
      Contains("name"));
}

// Kubernetes: a Job per placed job, read back by PyYAML as the manifests meant. One of several
// nodes is an Indexed Job with a headless Service; spot nodes are selected by the cloud's label;
// Kueue admits a job that names its LocalQueue.
TEST_CASE("job files for Kubernetes: Jobs on the placed instance type, under Kueue", "[schedule]") {
  if (std::system("/usr/bin/python3 -c 'import yaml' 2>/dev/null") != 0)
    NUBO_SKIP("PyYAML (python3-yaml) is not installed");
  nubo_test::TempDir dir;
  auto q = nc::parse_queue(R"({
    "jobs": [
      {"name": "big", "workload": {"params": "1B", "tokens": "40B", "batch": 512}, "nodes": 2,
       "deadline": "40h", "command": "python big.py", "nubo": true, "image": "pytorch/pytorch:2.5",
       "kueue": "team-a", "setup": "pip install x", "workdir": "/work"},
      {"name": "cheap", "workload": {"flops": 9e18, "checkpoint_size": "1G"}, "deadline": "40h",
       "interruptible": true, "command": "python cheap.py", "image": "pytorch/pytorch:2.5"}]})",
                           "queue.json");
  auto o = hourly_grid();
  o.request.max_nodes = 2;
  const auto s = nc::schedule(catalog(), q, o);
  REQUIRE(find(s, "big").estimate.nodes == 2);
  REQUIRE(find(s, "cheap").placement == nc::Placement::spot);
  const auto files =
      nc::write_job_files(catalog(), s, q, nc::JobFileFormat::kubernetes, dir / "k8s");
  CHECK(files.size() == 4);  // two manifests, apply.sh and the README
  const std::string check = R"(
import sys, yaml
big = list(yaml.safe_load_all(open(sys.argv[1] + "/big.yaml")))
assert [d["kind"] for d in big] == ["Service", "Job"], big
service, job = big
assert service["spec"] == {"clusterIP": "None", "selector": {"job-name": "big"}}, service
assert job["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "team-a"
spec = job["spec"]
assert spec["suspend"] is True and spec["completions"] == 2 and spec["parallelism"] == 2
assert spec["completionMode"] == "Indexed"
pod = spec["template"]["spec"]
assert pod["subdomain"] == "big" and pod["restartPolicy"] == "Never"
assert pod["nodeSelector"] == {"node.kubernetes.io/instance-type": "box"}, pod["nodeSelector"]
(c,) = pod["containers"]
assert c["image"] == "pytorch/pytorch:2.5" and c["workingDir"] == "/work"
assert c["resources"] == {"limits": {"nvidia.com/gpu": 8}}
assert c["command"][:2] == ["bash", "-c"]
assert c["command"][2].startswith('pip install x\nnubo-run --nnodes "$NNODES" --node-rank '
                                  '"$JOB_COMPLETION_INDEX" --master-addr "$MASTER_ADDR"')
assert {e["name"]: e["value"] for e in c["env"]} == {"NNODES": "2", "MASTER_ADDR": "big-0.big"}
(cheap,) = list(yaml.safe_load_all(open(sys.argv[1] + "/cheap.yaml")))
pod = cheap["spec"]["template"]["spec"]
assert pod["nodeSelector"]["eks.amazonaws.com/capacityType"] == "SPOT", pod["nodeSelector"]
assert cheap["spec"]["backoffLimit"] == 3 and "completionMode" not in cheap["spec"]
assert pod["containers"][0]["command"] == ["bash", "-c", "bash -c 'python cheap.py'"]
)";
  nubo::files::write_small_file(dir.path(), "check.py", check, 0600, "test script");
  CHECK(std::system(
            ("/usr/bin/python3 '" + (dir / "check.py") + "' '" + (dir / "k8s") + "'").c_str()) ==
        0);
  CHECK_THAT(nubo_test::read_file(dir / "k8s/apply.sh"),
             Catch::Contains("kubectl apply -f 'big.yaml'") &&
                 Catch::Contains("kubectl apply -f 'cheap.yaml'"));
  CHECK(std::system(("bash -n '" + (dir / "k8s/apply.sh") + "'").c_str()) == 0);
}

// Whatever a catalog, a queue or a command holds, the job files mean what was meant: YAML that
// PyYAML (SkyPilot's reader) reads back as exactly the task written, and sbatch scripts that bash
// runs as one srun of `bash -c COMMAND`, the command whole. The values here skip the checks made
// where they enter (catalog rows, queue files), as if one were missed.
TEST_CASE("job files hold hostile values as values, never as keys or commands", "[schedule]") {
  if (std::system("/usr/bin/python3 -c 'import yaml' 2>/dev/null") != 0)
    NUBO_SKIP("PyYAML (python3-yaml) is not installed");
  nubo_test::TempDir dir;
  nc::Queue q;
  q.horizon_h = 48;
  auto a = job("train", 4, 0, 40);
  a.command = "python train.py && touch " + (dir / "X1") + "\nFOO=1 python t.py; touch " +
              (dir / "X2") + " #";
  a.uses_nubo = true;
  auto b = job("plain", 2, 0, 40);
  b.command = "python t.py' ; touch " + (dir / "X3") + " ; echo '$(touch " + (dir / "X4") + ")`x`";
  q.jobs = {a, b};
  auto s = nc::schedule(catalog(), q, hourly_grid());
  const std::string region = "R\rsetup: touch X\rresources:\r  cloud: aws\r  region: R\r#";
  const std::string instance = "box\ntouch " + (dir / "X5") + " #";
  for (auto& j : s.jobs) {
    REQUIRE(j.placement != nc::Placement::unplaced);
    j.estimate.region = region;
    j.estimate.instance = instance;
    j.estimate.provider = "aws";
    j.tag = "t\x1b[2J\n  evil: 1";
  }
  nc::write_job_files(catalog(), s, q, nc::JobFileFormat::skypilot, dir / "sky");
  nc::write_job_files(catalog(), s, q, nc::JobFileFormat::slurm, dir / "slurm");
  // PyYAML reads each task: its keys are the ones written, its values the strings given.
  const std::string check = R"(
import json, sys, yaml
out = {}
for name in sys.argv[2:]:
    doc = yaml.safe_load(open(sys.argv[1] + "/" + name + ".yaml", encoding="utf-8"))
    assert sorted(doc) == ["name", "num_nodes", "resources", "run"], sorted(doc)
    r = doc["resources"]
    assert set(r) <= {"cloud", "region", "instance_type", "accelerators", "use_spot", "labels",
                      "job_recovery"}, sorted(r)
    assert sorted(r["labels"]) == ["nubo-tag"], r["labels"]
    out[name] = {"region": r["region"], "instance": r["instance_type"], "tag": r["labels"]["nubo-tag"],
                 "run": doc["run"]}
json.dump(out, open(sys.argv[1] + "/back.json", "w"))
)";
  nubo::files::write_small_file(dir.path(), "check.py", check, 0600, "test script");
  REQUIRE(std::system(
              ("/usr/bin/python3 '" + (dir / "check.py") + "' '" + (dir / "sky") + "' train plain")
                  .c_str()) == 0);
  const auto back = nlohmann::json::parse(nubo_test::read_file(dir / "sky/back.json"));
  for (const char* name : {"train", "plain"}) {
    CHECK(back[name]["region"] == region);
    CHECK(back[name]["instance"] == instance);
    CHECK(back[name]["tag"] == "t\x1b[2J\n  evil: 1");
  }
  CHECK_THAT(back["plain"]["run"].get<std::string>(),
             Catch::StartsWith("bash -c ") && Catch::Contains("touch"));
  // bash runs each sbatch script with a stand-in srun that writes its arguments: one srun, and
  // the command reaches it whole as one argument.
  const std::string fake_srun = "#!/bin/bash\nprintf '%s\\0' \"$@\" >> \"$ARGS\"\n";
  nubo::files::write_small_file(dir.path(), "srun", fake_srun, 0755, "stand-in srun");
  for (const auto* j : {&a, &b}) {
    const auto script = dir / ("slurm/" + j->name + ".sbatch");
    REQUIRE(std::system(("bash -n '" + script + "'").c_str()) == 0);
    const auto args = dir / (j->name + ".args");
    REQUIRE(std::system(("cd '" + dir.path() + "' && PATH='" + dir.path() + ":'\"$PATH\" ARGS='" +
                         args +
                         "' SLURM_JOB_NUM_NODES=1 SLURM_NODEID=0 SLURM_JOB_NODELIST=n1 "
                         "bash '" +
                         script + "' 2>/dev/null || true")
                            .c_str()) >= 0);
    const auto got = nubo_test::read_file(args);
    std::vector<std::string> argv;
    for (std::size_t at = 0; at < got.size();) {
      const auto end = got.find('\0', at);
      argv.push_back(got.substr(at, end - at));
      at = end + 1;
    }
    REQUIRE(argv.size() >= 3);
    CHECK(argv[argv.size() - 3] == "bash");
    CHECK(argv[argv.size() - 2] == "-c");
    CHECK(argv.back() == j->command);
  }
  for (const char* x : {"X", "X1", "X2", "X3", "X4", "X5"})
    CHECK_FALSE(std::filesystem::exists(dir / x));
}
