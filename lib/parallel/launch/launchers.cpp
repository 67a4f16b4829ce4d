#include "parallel/launch/launchers.hpp"

#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "common/env.hpp"
#include "common/text.hpp"
#include "nubo/error.hpp"

namespace nubo::parallel {
namespace {

// A job of more than 65536 processes is far beyond what a rendezvous store serves.
constexpr std::int64_t kMaxWorld = 65536;
// torchrun's default port, used where a launcher names rank 0's host but no port.
constexpr int kDefaultPort = 29500;

std::optional<std::string> var(const char* name) {
  auto v = env::get(name);
  if (!v || text::trim(*v).empty()) return std::nullopt;
  return std::string(text::trim(*v));
}

int number(const char* name, const std::string& value, std::int64_t lo, std::int64_t hi) {
  return static_cast<int>(text::parse_int(value, name, lo, hi));
}

// "RANK and WORLD_SIZE": both, or neither is a mistake worth naming.
void require_all(const char* launcher, std::initializer_list<const char*> names) {
  std::vector<std::string> missing;
  for (const char* n : names)
    if (!var(n)) missing.emplace_back(n);
  if (!missing.empty())
    throw Error(Errc::invalid_argument,
                std::string(launcher) + "'s variables are partly set: " +
                    text::join(missing, ", ") + (missing.size() == 1 ? " is" : " are") +
                    " missing. Start the program with " + launcher +
                    ", or unset the others, or set NUBO_RANK, NUBO_WORLD_SIZE and NUBO_RENDEZVOUS");
}

void check_ranks(LaunchedJob& j, const char* rank_name, const char* world_name) {
  if (j.rank >= j.world_size)
    throw Error(Errc::invalid_argument, std::string(rank_name) + "=" + std::to_string(j.rank) +
                                            " is not below " + world_name + "=" +
                                            std::to_string(j.world_size));
  if (j.local_world_size > 0 && j.local_rank >= j.local_world_size)
    throw Error(Errc::invalid_argument, "the local rank " + std::to_string(j.local_rank) +
                                            " is not below the processes on the host (" +
                                            std::to_string(j.local_world_size) + ")");
}

// nubo's store beside torch.distributed's: one port above MASTER_PORT (default 29500). torchrun's
// agent, or the program's own init_process_group, already listens on MASTER_PORT, and a
// program may use both.
std::string store_beside_master(const std::string& addr) {
  const int port =
      number("MASTER_PORT", var("MASTER_PORT").value_or(std::to_string(kDefaultPort)), 1, 65534);
  const bool v6 = addr.find(':') != std::string::npos;
  return "tcp://" + (v6 ? "[" + addr + "]" : addr) + ":" + std::to_string(port + 1);
}

// Where the processes meet, in the order every launcher shares: NUBO_RENDEZVOUS, then
// MASTER_ADDR (a tcp:// store that rank 0 hosts), then what `fallback` gives.
std::string rendezvous(const std::string& fallback) {
  if (auto r = var("NUBO_RENDEZVOUS")) return *r;
  if (auto addr = var("MASTER_ADDR")) return store_beside_master(*addr);
  return fallback;
}

// A folder for a job that lives on one host: in the temporary directory, named after the job.
std::string local_folder(const std::string& job) {
  const char* tmp = std::getenv("TMPDIR");
  return "file://" + std::string(tmp && *tmp == '/' ? tmp : "/tmp") + "/nubo-rendezvous-" + job;
}

// nubo-run's variables (or a user's, set by hand). NUBO_RENDEZVOUS alone does not make a job: it
// names where another launcher's processes meet.
std::optional<LaunchedJob> from_nubo() {
  const auto j = env::job();
  if (!j) return std::nullopt;
  LaunchedJob out;
  out.launcher = "nubo-run";
  out.rank = j->rank;
  out.world_size = j->world_size;
  out.local_rank = j->local_rank;
  out.local_world_size = j->local_world_size;
  out.rendezvous = j->rendezvous;
  return out;
}

std::optional<LaunchedJob> from_nubo_ranks() {
  if (!var("NUBO_RANK") && !var("NUBO_WORLD_SIZE") && !var("NUBO_LOCAL_RANK")) return std::nullopt;
  return from_nubo();
}

// torchrun (and the Kubernetes PyTorchJob operator, which sets the same variables).
std::optional<LaunchedJob> from_torchrun() {
  if (!var("RANK") && !var("WORLD_SIZE")) return std::nullopt;
  require_all("torchrun", {"RANK", "WORLD_SIZE"});
  LaunchedJob j;
  j.launcher = "torchrun";
  j.world_size = number("WORLD_SIZE", *var("WORLD_SIZE"), 1, kMaxWorld);
  j.rank = number("RANK", *var("RANK"), 0, kMaxWorld - 1);
  j.local_rank =
      number("LOCAL_RANK", var("LOCAL_RANK").value_or(std::to_string(j.rank)), 0, kMaxWorld - 1);
  if (auto lw = var("LOCAL_WORLD_SIZE"))
    j.local_world_size = number("LOCAL_WORLD_SIZE", *lw, 1, j.world_size);
  check_ranks(j, "RANK", "WORLD_SIZE");
  j.rendezvous = rendezvous("");
  if (j.rendezvous.empty() && j.world_size > 1)
    throw Error(Errc::invalid_argument,
                "torchrun's RANK and WORLD_SIZE are set but MASTER_ADDR is not: nubo meets rank "
                "0 at MASTER_ADDR:MASTER_PORT (or set NUBO_RENDEZVOUS)");
  return j;
}

// The tasks on node `node` from SLURM_TASKS_PER_NODE, e.g. "2(x3),1": nodes 0-2 run 2, node 3
// runs 1. 0 when the value does not say.
int slurm_tasks_on(const std::string& spec, int node) {
  int first = 0;
  for (const auto& part : text::split(spec, ',')) {
    const auto open = part.find("(x");
    const int tasks =
        number("SLURM_TASKS_PER_NODE", std::string(part.substr(0, open)), 1, kMaxWorld);
    int repeat = 1;
    if (open != std::string_view::npos) {
      if (part.back() != ')')
        throw Error(Errc::invalid_argument,
                    "SLURM_TASKS_PER_NODE='" + spec + "' is not like 2(x3),1");
      repeat = number("SLURM_TASKS_PER_NODE",
                      std::string(part.substr(open + 2, part.size() - open - 3)), 1, kMaxWorld);
    }
    if (node < first + repeat) return tasks;
    first += repeat;
  }
  return 0;
}

// The first host of a Slurm host list, e.g. "gpu[07-12,20],cpu01" -> "gpu07".
std::string slurm_first_host(const std::string& list) {
  const auto bracket = list.find('[');
  const auto comma = list.find(',');
  if (bracket == std::string::npos || (comma != std::string::npos && comma < bracket))
    return list.substr(0, comma);
  const auto end = list.find_first_of(",-]", bracket + 1);
  if (end == std::string::npos)
    throw Error(Errc::invalid_argument, "the Slurm host list '" + list + "' has no closing ']'");
  return list.substr(0, bracket) + list.substr(bracket + 1, end - bracket - 1);
}

std::optional<LaunchedJob> from_slurm() {
  // srun's steps have a step id; a program run straight from an sbatch script (SLURM_PROCID is
  // 0 there too, SLURM_NTASKS the whole allocation's) is not one of a step's tasks: alone.
  if (!var("SLURM_PROCID") || !var("SLURM_STEP_ID")) return std::nullopt;
  const auto ntasks = var("SLURM_NTASKS") ? var("SLURM_NTASKS") : var("SLURM_NPROCS");
  if (!ntasks) require_all("srun", {"SLURM_PROCID", "SLURM_NTASKS"});
  LaunchedJob j;
  j.launcher = "slurm";
  j.world_size = number("SLURM_NTASKS", *ntasks, 1, kMaxWorld);
  j.rank = number("SLURM_PROCID", *var("SLURM_PROCID"), 0, kMaxWorld - 1);
  j.local_rank = number("SLURM_LOCALID", var("SLURM_LOCALID").value_or("0"), 0, kMaxWorld - 1);
  if (auto spec = var("SLURM_TASKS_PER_NODE"))
    j.local_world_size = slurm_tasks_on(
        *spec, number("SLURM_NODEID", var("SLURM_NODEID").value_or("0"), 0, kMaxWorld - 1));
  check_ranks(j, "SLURM_PROCID", "SLURM_NTASKS");
  const std::string job =
      var("SLURM_JOB_ID").value_or("job") + "." + var("SLURM_STEP_ID").value_or("0");
  const auto nodes =
      var("SLURM_STEP_NUM_NODES") ? var("SLURM_STEP_NUM_NODES") : var("SLURM_JOB_NUM_NODES");
  std::string fallback;
  if (!nodes || *nodes == "1") {
    fallback = local_folder("slurm-" + job);
  } else if (auto list = var("SLURM_STEP_NODELIST") ? var("SLURM_STEP_NODELIST")
                                                    : var("SLURM_JOB_NODELIST")) {
    // Rank 0 runs on the step's first node (srun's default block distribution); the port is
    // picked from the job id so that two jobs sharing a node do not meet each other.
    const int job_id = number("SLURM_JOB_ID", var("SLURM_JOB_ID").value_or("0"), 0, INT32_MAX);
    fallback = "tcp://" + slurm_first_host(*list) + ":" + std::to_string(20000 + job_id % 10000);
  }
  j.rendezvous = rendezvous(fallback);
  if (j.rendezvous.empty() && j.world_size > 1)
    throw Error(Errc::invalid_argument,
                "a Slurm job on several nodes needs SLURM_STEP_NODELIST, "
                "MASTER_ADDR or NUBO_RENDEZVOUS to find rank 0");
  return j;
}

std::optional<LaunchedJob> from_openmpi() {
  if (!var("OMPI_COMM_WORLD_RANK")) return std::nullopt;
  require_all("mpirun", {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"});
  LaunchedJob j;
  j.launcher = "mpirun";
  j.world_size = number("OMPI_COMM_WORLD_SIZE", *var("OMPI_COMM_WORLD_SIZE"), 1, kMaxWorld);
  j.rank = number("OMPI_COMM_WORLD_RANK", *var("OMPI_COMM_WORLD_RANK"), 0, kMaxWorld - 1);
  j.local_rank = number("OMPI_COMM_WORLD_LOCAL_RANK",
                        var("OMPI_COMM_WORLD_LOCAL_RANK").value_or("0"), 0, kMaxWorld - 1);
  if (auto ls = var("OMPI_COMM_WORLD_LOCAL_SIZE"))
    j.local_world_size = number("OMPI_COMM_WORLD_LOCAL_SIZE", *ls, 1, j.world_size);
  check_ranks(j, "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE");
  // On one host, a folder in the session directory that mpirun makes for this job alone and
  // removes when it ends (Open MPI 4 and 5 name it in PMIX_SERVER_TMPDIR): never an earlier
  // job's keys, and nothing left behind.
  std::string fallback;
  if (j.local_world_size == j.world_size) {
    if (auto session = var("PMIX_SERVER_TMPDIR"); session && session->front() == '/')
      fallback = "file://" + *session + "/nubo-rendezvous";
  }
  j.rendezvous = rendezvous(fallback);
  if (j.rendezvous.empty() && j.world_size > 1)
    throw Error(Errc::invalid_argument,
                "an mpirun job needs MASTER_ADDR (mpirun -x MASTER_ADDR=<rank 0's host>) or "
                "NUBO_RENDEZVOUS: Open MPI does not tell its processes where rank 0 is (on one "
                "host nubo meets in mpirun's session directory, PMIX_SERVER_TMPDIR)");
  return j;
}

// SkyPilot runs the task once per node: a process per node, holding all of the node's GPUs.
std::optional<LaunchedJob> from_skypilot() {
  if (!var("SKYPILOT_NODE_RANK") && !var("SKYPILOT_NODE_IPS")) return std::nullopt;
  require_all("SkyPilot", {"SKYPILOT_NODE_RANK", "SKYPILOT_NODE_IPS"});
  const std::string listed = *var("SKYPILOT_NODE_IPS");
  std::vector<std::string> ips;
  for (const auto& ip : text::split(listed, '\n'))
    if (!text::trim(ip).empty()) ips.emplace_back(text::trim(ip));
  LaunchedJob j;
  j.launcher = "skypilot";
  j.world_size = static_cast<int>(ips.size());
  j.rank = number("SKYPILOT_NODE_RANK", *var("SKYPILOT_NODE_RANK"), 0, kMaxWorld - 1);
  j.local_rank = 0;
  j.local_world_size = 1;
  j.whole_node = true;
  check_ranks(j, "SKYPILOT_NODE_RANK", "the number of SKYPILOT_NODE_IPS");
  j.rendezvous = rendezvous(store_beside_master(ips.front()));
  return j;
}

}  // namespace

std::optional<LaunchedJob> launched_job() {
  using Reader = std::optional<LaunchedJob> (*)();
  // The order of docs/parallel.md's table: nubo's own variables first.
  static constexpr Reader kReaders[] = {from_nubo_ranks, from_torchrun, from_slurm, from_openmpi,
                                        from_skypilot};
  for (Reader read : kReaders)
    if (auto j = read()) return j;
  // No launcher: NUBO_RENDEZVOUS alone is half of nubo's variables, which env::job() names.
  return from_nubo();
}

}  // namespace nubo::parallel
