// JobSpec::from_env under every launcher, with the environments set exactly as each launcher's
// documentation describes them: torchrun (and PyTorchJob), Slurm's srun, Open MPI's mpirun and
// SkyPilot; the order between them; and the errors for variables that are half set or wrong.
// (A real mpirun is in process_test.cpp.)
#include <catch2/catch.hpp>

#include <cstdlib>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "nubo/error.hpp"
#include "nubo/parallel.hpp"

using namespace nubo;

namespace {

// Sets exactly the given variables for the test's life, with every launcher's other variables
// unset; restores what was there before.
class LauncherEnv {
 public:
  using Vars = std::initializer_list<std::pair<const char*, const char*>>;
  explicit LauncherEnv(Vars vars) {
    for (const char* v : {"NUBO_RANK",
                          "NUBO_LOCAL_RANK",
                          "NUBO_WORLD_SIZE",
                          "NUBO_LOCAL_WORLD_SIZE",
                          "NUBO_RENDEZVOUS",
                          "RANK",
                          "WORLD_SIZE",
                          "LOCAL_RANK",
                          "LOCAL_WORLD_SIZE",
                          "MASTER_ADDR",
                          "MASTER_PORT",
                          "GROUP_RANK",
                          "ROLE_RANK",
                          "ROLE_WORLD_SIZE",
                          "TORCHELASTIC_RUN_ID",
                          "SLURM_PROCID",
                          "SLURM_NTASKS",
                          "SLURM_NPROCS",
                          "SLURM_LOCALID",
                          "SLURM_NODEID",
                          "SLURM_JOB_ID",
                          "SLURM_STEP_ID",
                          "SLURM_TASKS_PER_NODE",
                          "SLURM_STEP_NUM_NODES",
                          "SLURM_JOB_NUM_NODES",
                          "SLURM_STEP_NODELIST",
                          "SLURM_JOB_NODELIST",
                          "OMPI_COMM_WORLD_RANK",
                          "OMPI_COMM_WORLD_SIZE",
                          "OMPI_COMM_WORLD_LOCAL_RANK",
                          "OMPI_COMM_WORLD_LOCAL_SIZE",
                          "PMIX_NAMESPACE",
                          "PMIX_SERVER_TMPDIR",
                          "OMPI_MCA_ess_base_jobid",
                          "SKYPILOT_NODE_RANK",
                          "SKYPILOT_NODE_IPS",
                          "SKYPILOT_NUM_GPUS_PER_NODE",
                          "SKYPILOT_NUM_NODES",
                          "TMPDIR"}) {
      if (const char* old = std::getenv(v)) saved_.emplace(v, old);
      ::unsetenv(v);
      names_.push_back(v);
    }
    for (const auto& [k, v] : vars) ::setenv(k, v, 1);
  }
  LauncherEnv(const LauncherEnv&) = delete;
  LauncherEnv& operator=(const LauncherEnv&) = delete;
  ~LauncherEnv() {
    for (const auto& v : names_) ::unsetenv(v.c_str());
    for (const auto& [k, v] : saved_) ::setenv(k.c_str(), v.c_str(), 1);
  }

 private:
  std::vector<std::string> names_;
  std::map<std::string, std::string> saved_;
};

auto invalid(const std::string& says) {
  return Catch::Predicate<Error>(
      [says](const Error& e) {
        return e.code() == Errc::invalid_argument &&
               std::string(e.what()).find(says) != std::string::npos;
      },
      "invalid_argument saying \"" + says + "\"");
}

}  // namespace

TEST_CASE("torchrun's variables: ranks, the host's share, rank 0's store at MASTER_ADDR",
          "[launchers]") {
  // What torchrun --nnodes 2 --nproc-per-node 4 gives the second process of the second node.
  LauncherEnv e({{"RANK", "5"},
                 {"WORLD_SIZE", "8"},
                 {"LOCAL_RANK", "1"},
                 {"LOCAL_WORLD_SIZE", "4"},
                 {"GROUP_RANK", "1"},
                 {"ROLE_RANK", "5"},
                 {"ROLE_WORLD_SIZE", "8"},
                 {"MASTER_ADDR", "10.0.0.7"},
                 {"MASTER_PORT", "29400"},
                 {"TORCHELASTIC_RUN_ID", "none"}});
  const JobSpec j = JobSpec::from_env();
  CHECK(j.launcher == "torchrun");
  CHECK(j.rank == 5);
  CHECK(j.world_size == 8);
  CHECK(j.local_rank == 1);
  CHECK(j.local_world_size == 4);
  CHECK(j.rendezvous == "tcp://10.0.0.7:29401");  // beside torch's store on 29400
  CHECK_FALSE(j.whole_node);
}

TEST_CASE("torchrun's variables: IPv6, the default port, and NUBO_RENDEZVOUS overriding",
          "[launchers]") {
  LauncherEnv e({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "fd00::7"}});
  CHECK(JobSpec::from_env().rendezvous == "tcp://[fd00::7]:29501");
  ::setenv("NUBO_RENDEZVOUS", "redis://cache:6379/run1", 1);
  ::setenv("RANK", "1", 1);
  CHECK(JobSpec::from_env().rendezvous == "redis://cache:6379/run1");
}

TEST_CASE("Slurm's srun: a step's task on several nodes meets at the first node", "[launchers]") {
  // srun -N 3 --ntasks-per-node 2: task 3 runs on node 1 as its second task.
  LauncherEnv e({{"SLURM_PROCID", "3"},
                 {"SLURM_NTASKS", "6"},
                 {"SLURM_NPROCS", "6"},
                 {"SLURM_LOCALID", "1"},
                 {"SLURM_NODEID", "1"},
                 {"SLURM_JOB_ID", "123457"},
                 {"SLURM_STEP_ID", "0"},
                 {"SLURM_TASKS_PER_NODE", "2(x3)"},
                 {"SLURM_STEP_NUM_NODES", "3"},
                 {"SLURM_STEP_NODELIST", "gpu[07-08,12]"},
                 {"SLURM_JOB_NODELIST", "gpu[07-08,12]"}});
  const JobSpec j = JobSpec::from_env();
  CHECK(j.launcher == "slurm");
  CHECK(j.rank == 3);
  CHECK(j.world_size == 6);
  CHECK(j.local_rank == 1);
  CHECK(j.local_world_size == 2);
  CHECK(j.rendezvous == "tcp://gpu07:23457");  // 20000 + job id % 10000
}

TEST_CASE("Slurm's srun: uneven tasks per node, one node, and sbatch without srun", "[launchers]") {
  {
    // "3,2(x2)": node 0 runs 3 tasks, nodes 1 and 2 run 2; this is node 2.
    LauncherEnv e({{"SLURM_PROCID", "6"},
                   {"SLURM_NTASKS", "7"},
                   {"SLURM_LOCALID", "1"},
                   {"SLURM_NODEID", "2"},
                   {"SLURM_JOB_ID", "9"},
                   {"SLURM_STEP_ID", "4"},
                   {"SLURM_TASKS_PER_NODE", "3,2(x2)"},
                   {"SLURM_STEP_NUM_NODES", "3"},
                   {"SLURM_STEP_NODELIST", "a01,b[3-4]"}});
    const JobSpec j = JobSpec::from_env();
    CHECK(j.local_world_size == 2);
    CHECK(j.rendezvous == "tcp://a01:20009");
  }
  {
    LauncherEnv e({{"SLURM_PROCID", "1"},
                   {"SLURM_NTASKS", "2"},
                   {"SLURM_LOCALID", "1"},
                   {"SLURM_JOB_ID", "77"},
                   {"SLURM_STEP_ID", "2"},
                   {"SLURM_STEP_NUM_NODES", "1"},
                   {"TMPDIR", "/scratch"}});
    CHECK(JobSpec::from_env().rendezvous == "file:///scratch/nubo-rendezvous-slurm-77.2");
  }
  {
    // The batch script itself: SLURM_PROCID is 0 there, but it is no step's task.
    LauncherEnv e({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "8"}, {"SLURM_JOB_ID", "77"}});
    const JobSpec j = JobSpec::from_env();
    CHECK(j.world_size == 1);
    CHECK(j.launcher.empty());
  }
}

TEST_CASE("Open MPI's mpirun: one host meets in the job's session directory", "[launchers]") {
  // What Open MPI 4.1's mpirun -np 2 gives its second process (among many others).
  LauncherEnv e({{"OMPI_COMM_WORLD_RANK", "1"},
                 {"OMPI_COMM_WORLD_SIZE", "2"},
                 {"OMPI_COMM_WORLD_LOCAL_RANK", "1"},
                 {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"},
                 {"PMIX_NAMESPACE", "1341194241"},
                 {"PMIX_SERVER_TMPDIR", "/tmp/ompi.vm.0/pid.8975"}});
  const JobSpec j = JobSpec::from_env();
  CHECK(j.launcher == "mpirun");
  CHECK(j.rank == 1);
  CHECK(j.local_world_size == 2);
  CHECK(j.rendezvous == "file:///tmp/ompi.vm.0/pid.8975/nubo-rendezvous");
  // Across hosts Open MPI does not say where rank 0 is: MASTER_ADDR (mpirun -x) does.
  ::setenv("OMPI_COMM_WORLD_LOCAL_SIZE", "1", 1);
  ::setenv("OMPI_COMM_WORLD_LOCAL_RANK", "0", 1);
  CHECK_THROWS_MATCHES(JobSpec::from_env(), Error, invalid("needs MASTER_ADDR"));
  ::setenv("MASTER_ADDR", "node7", 1);
  CHECK(JobSpec::from_env().rendezvous == "tcp://node7:29501");
}

TEST_CASE("SkyPilot: a process per node, holding the node's GPUs, meeting at the first node",
          "[launchers]") {
  LauncherEnv e({{"SKYPILOT_NODE_RANK", "2"},
                 {"SKYPILOT_NODE_IPS", "172.31.1.10\n172.31.1.11\n172.31.1.12\n"},
                 {"SKYPILOT_NUM_GPUS_PER_NODE", "8"},
                 {"SKYPILOT_NUM_NODES", "3"}});
  const JobSpec j = JobSpec::from_env();
  CHECK(j.launcher == "skypilot");
  CHECK(j.rank == 2);
  CHECK(j.world_size == 3);
  CHECK(j.local_rank == 0);
  CHECK(j.local_world_size == 1);
  CHECK(j.whole_node);
  CHECK(j.rendezvous == "tcp://172.31.1.10:29501");
}

TEST_CASE("launchers are read in order: nubo-run's variables, then torchrun's, then Slurm's",
          "[launchers]") {
  LauncherEnv e({{"NUBO_RANK", "0"},
                 {"NUBO_WORLD_SIZE", "2"},
                 {"NUBO_LOCAL_WORLD_SIZE", "2"},
                 {"NUBO_RENDEZVOUS", "file:///tmp/x"},
                 {"RANK", "1"},
                 {"WORLD_SIZE", "2"},
                 {"MASTER_ADDR", "h"},
                 {"SLURM_PROCID", "5"},
                 {"SLURM_NTASKS", "8"},
                 {"SLURM_STEP_ID", "0"}});
  CHECK(JobSpec::from_env().launcher == "nubo-run");
  CHECK(JobSpec::from_env().local_world_size == 2);
  for (const char* v : {"NUBO_RANK", "NUBO_WORLD_SIZE", "NUBO_LOCAL_WORLD_SIZE", "NUBO_RENDEZVOUS"})
    ::unsetenv(v);
  CHECK(JobSpec::from_env().launcher == "torchrun");  // torchrun under srun: torchrun's ranks
  ::unsetenv("RANK");
  ::unsetenv("WORLD_SIZE");
  ::unsetenv("MASTER_ADDR");
  CHECK(JobSpec::from_env().launcher == "slurm");
}

TEST_CASE("half-set or wrong launcher variables name the variable", "[launchers]") {
  {
    LauncherEnv e({{"RANK", "0"}});
    CHECK_THROWS_MATCHES(JobSpec::from_env(), Error, invalid("WORLD_SIZE is missing"));
  }
  {
    LauncherEnv e({{"RANK", "2"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "h"}});
    CHECK_THROWS_MATCHES(JobSpec::from_env(), Error, invalid("RANK=2 is not below WORLD_SIZE=2"));
  }
  {
    LauncherEnv e({{"RANK", "0"}, {"WORLD_SIZE", "2"}});
    CHECK_THROWS_MATCHES(JobSpec::from_env(), Error, invalid("MASTER_ADDR is not"));
  }
  {
    LauncherEnv e({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "h"}, {"MASTER_PORT", "0"}});
    CHECK_THROWS_MATCHES(JobSpec::from_env(), Error, invalid("MASTER_PORT"));
  }
  {
    LauncherEnv e({{"RANK", "0"}, {"WORLD_SIZE", "two"}});
    CHECK_THROWS_MATCHES(JobSpec::from_env(), Error, invalid("WORLD_SIZE"));
  }
  {
    LauncherEnv e({{"SLURM_PROCID", "0"},
                   {"SLURM_NTASKS", "4"},
                   {"SLURM_STEP_ID", "0"},
                   {"SLURM_TASKS_PER_NODE", "2(x2"}});
    CHECK_THROWS_MATCHES(JobSpec::from_env(), Error, invalid("SLURM_TASKS_PER_NODE"));
  }
  {
    LauncherEnv e({{"SLURM_PROCID", "0"},
                   {"SLURM_NTASKS", "4"},
                   {"SLURM_STEP_ID", "0"},
                   {"SLURM_STEP_NUM_NODES", "2"}});
    CHECK_THROWS_MATCHES(JobSpec::from_env(), Error, invalid("needs SLURM_STEP_NODELIST"));
  }
  {
    LauncherEnv e({{"OMPI_COMM_WORLD_RANK", "0"},
                   {"OMPI_COMM_WORLD_SIZE", "4"},
                   {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"}});
    CHECK_THROWS_MATCHES(JobSpec::from_env(), Error, invalid("mpirun -x MASTER_ADDR"));
  }
  {
    LauncherEnv e({{"SKYPILOT_NODE_RANK", "3"}, {"SKYPILOT_NODE_IPS", "a\nb"}});
    CHECK_THROWS_MATCHES(JobSpec::from_env(), Error, invalid("SKYPILOT_NODE_RANK=3 is not below"));
  }
  {
    LauncherEnv e({{"NUBO_RANK", "0"},
                   {"NUBO_WORLD_SIZE", "2"},
                   {"NUBO_LOCAL_RANK", "1"},
                   {"NUBO_LOCAL_WORLD_SIZE", "1"},
                   {"NUBO_RENDEZVOUS", "file:///tmp/x"}});
    CHECK_THROWS_MATCHES(JobSpec::from_env(), Error,
                         invalid("NUBO_LOCAL_RANK=1 is not below NUBO_LOCAL_WORLD_SIZE=1"));
  }
}
