// nubo-run: starts the processes of a data-parallel job and watches them.
//
//   nubo-run -n 4 -- ./train --epochs 3
//   nubo-run -n 8 --nnodes 2 --node-rank 0 --master-addr head -- ./train     (on each node)
//   nubo-run -n 8 --nnodes 2 --node-rank 1 --rendezvous redis://head:6379 --job-id run7 -- ./train
//
// Each process gets NUBO_RANK, NUBO_LOCAL_RANK, NUBO_WORLD_SIZE, NUBO_LOCAL_WORLD_SIZE and
// NUBO_RENDEZVOUS, which nubo::Team::from_env() reads, and torchrun's RANK, LOCAL_RANK,
// WORLD_SIZE, LOCAL_WORLD_SIZE, MASTER_ADDR and MASTER_PORT, so that a torch.distributed script
// runs unchanged; see docs/parallel.md.
#include <sched.h>
#include <stdlib.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <random>

#include "launcher.hpp"
#include "nubo/error.hpp"
#include "nubo/interruption.hpp"
#include "nubo/nubo.hpp"

namespace {

std::string random_job_id() {
  std::random_device rd;
  std::uniform_int_distribution<unsigned> d(0, 0xffffff);
  char buf[32];
  std::snprintf(buf, sizeof buf, "job-%d-%06x", static_cast<int>(::getpid()), d(rd));
  return buf;
}

// The CPUs nubo-run may use (taskset and cgroups count, not the machine's).
int usable_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return 1;
  return std::max(1, CPU_COUNT(&set));
}

bool set_in_env(const char* name) {
  const char* v = std::getenv(name);
  return v && *v;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Starts the processes of a nubo job, prefixes their output with their rank, "
      "and stops them all when one fails.",
      "nubo-run"};
  int nproc = 0, nnodes = 1, node_rank = 0, master_port = 29500;
  std::string rendezvous, job_id, master_addr;
  double grace = 5.0;
  int max_restarts = 0;
  bool cpu_bind = false;
  std::vector<std::string> command;
  app.add_option("--nproc,-n", nproc,
                 "Processes on this node (default: one per GPU of this machine, else 1)")
      ->check(CLI::Range(1, 4096));
  app.add_option("--nnodes", nnodes, "Nodes in the job (each runs nubo-run)")
      ->check(CLI::Range(1, 4096));
  app.add_option("--node-rank", node_rank, "This node, 0 .. nnodes - 1")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--master-addr", master_addr,
                 "Node 0's address: with --nnodes > 1, the processes meet at a store that rank 0 "
                 "hosts there (tcp://ADDR:PORT+1), with no shared folder");
  app.add_option("--master-port", master_port,
                 "MASTER_PORT for torch.distributed; nubo's own store listens on the next port "
                 "(default 29500 across nodes, a free port on one)")
      ->check(CLI::Range(1, 65534));
  app.add_option("--rendezvous", rendezvous,
                 "Where the processes meet instead: file:///shared/dir, tcp://host:port or "
                 "redis://host:port (default: a fresh temporary folder on one node)");
  app.add_option("--job-id", job_id,
                 "Names the job in a file or Redis rendezvous; the same on every node (default: "
                 "a fresh one, single node only)");
  app.add_option("--grace", grace,
                 "Seconds the other processes get to finish after one fails, before SIGTERM "
                 "(and again before SIGKILL)")
      ->check(CLI::Range(0.0, 3600.0));
  app.add_option("--max-restarts", max_restarts,
                 "When a process fails, stop them all and start the job again, up to N times "
                 "(backoff 1 s, 2 s, 4 s ... 30 s while attempts fail within 10 s of their start, "
                 "else 1 s); each attempt sees NUBO_RESTART_COUNT")
      ->check(CLI::Range(0, 1000));
  app.add_flag("--cpu-bind", cpu_bind,
               "Pin each process's host workers to cores of their own (NUBO_CPU_BIND=1), "
               "NUMA-aware");
  app.add_option("command", command, "The program to run, and its arguments (after --)")
      ->required();
  app.footer(
      "Each process gets NUBO_RANK (node-rank * nproc + its index), NUBO_LOCAL_RANK, "
      "NUBO_WORLD_SIZE (nnodes * nproc), NUBO_LOCAL_WORLD_SIZE and NUBO_RENDEZVOUS; torchrun's "
      "RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, MASTER_ADDR and MASTER_PORT; and, "
      "unless set, OMP_NUM_THREADS and OPENBLAS_NUM_THREADS = usable CPUs / nproc. Exit "
      "status: 0 when all succeed; 75 when they saved their state and stopped to be resumed "
      "(after SIGTERM, all of them); else the failed rank's exit status, or 128 + its signal.");
  CLI11_PARSE(app, argc, argv);

  auto fail = [](const std::string& m) {
    std::cerr << "nubo-run: " << m << "\n";
    return 2;
  };
  if (node_rank >= nnodes) {
    return fail("--node-rank " + std::to_string(node_rank) + " is not below --nnodes " +
                std::to_string(nnodes));
  }
  for (char c : job_id) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') {
      return fail("--job-id '" + job_id + "' may hold letters, digits, '-', '_' and '.' only");
    }
  }

  // The devices, for the default process count and the transport between the processes.
  int gpus = 0;
  try {
    for (const auto& d : nubo::discover().devices) gpus += d.backend == nubo::Backend::host ? 0 : 1;
  } catch (const nubo::Error&) {  // no devices to be found: the processes run on the CPU
  }
  if (nproc == 0) nproc = std::max(gpus, 1);
  if (static_cast<long>(nnodes) * nproc > 65536) {
    return fail("--nnodes x --nproc is more than 65536 processes");
  }

  // Where the processes meet: a job's own namespace inside a given file or Redis location, so
  // that keys of an earlier job there are never mistaken for this one's; a tcp:// store that
  // rank 0 hosts for this job only; or a fresh folder on a single node.
  std::string made_dir;  // a folder nubo-run created, removed at the end
  try {
    if (rendezvous.empty() && nnodes > 1) {
      if (master_addr.empty()) {
        return fail(
            "a job on several nodes needs --master-addr (node 0's address: the processes meet "
            "at a store that rank 0 hosts there), or --rendezvous: a folder every node shares "
            "(file:///shared/dir) or a Redis server (redis://host:6379)");
      }
      const bool v6 = master_addr.find(':') != std::string::npos;
      rendezvous = "tcp://" + (v6 ? "[" + master_addr + "]" : master_addr) + ":" +
                   std::to_string(master_port + 1);
      nubo::check_rendezvous(rendezvous, "--master-addr and --master-port");
    } else if (rendezvous.empty()) {
      const char* tmp = std::getenv("TMPDIR");
      std::string tmpl = std::string(tmp && *tmp ? tmp : "/tmp") + "/nubo-run-XXXXXX";
      if (::mkdtemp(tmpl.data()) == nullptr) return fail("cannot create a temporary folder");
      made_dir = tmpl;
      rendezvous = "file://" + made_dir;
    } else {
      nubo::check_rendezvous(rendezvous, "--rendezvous");
      const bool redis_with_job = rendezvous.rfind("redis://", 0) == 0 &&
                                  rendezvous.find('/', 8) != std::string::npos &&
                                  rendezvous.back() != '/';
      // A tcp:// store is the job's own: rank 0 hosts it for this job only.
      const bool own_store = rendezvous.rfind("tcp://", 0) == 0;
      if (!redis_with_job && !own_store) {
        if (job_id.empty() && nnodes > 1) {
          return fail(
              "a job on several nodes needs --job-id NAME, the same on every node, so "
              "that they find each other and not an earlier job");
        }
        if (job_id.empty()) job_id = random_job_id();
        while (!rendezvous.empty() && rendezvous.back() == '/') rendezvous.pop_back();
        rendezvous += "/" + job_id;
        if (rendezvous.rfind("file://", 0) == 0 && nnodes == 1) made_dir = rendezvous.substr(7);
      }
      nubo::check_rendezvous(rendezvous, "--rendezvous with --job-id");
    }
  } catch (const nubo::Error& e) {
    return fail(e.what());
  }

  nubo::run::LaunchSpec spec;
  spec.command = command;
  spec.nproc = nproc;
  spec.node_rank = node_rank;
  spec.world_size = nnodes * nproc;
  spec.rendezvous = rendezvous;
  spec.grace = std::chrono::milliseconds(static_cast<long long>(grace * 1000));
  // torch.distributed's store: node 0's, or on one node a free loopback port.
  spec.master_addr = master_addr.empty() ? "127.0.0.1" : master_addr;
  spec.master_port = master_port;
  if (nnodes == 1 && !app.count("--master-port")) spec.master_port = nubo::run::free_port();

  // Each process's share of the CPUs, as torchrun does with OMP_NUM_THREADS, unless set.
  const int cpus = usable_cpus();
  const int threads = std::max(1, cpus / nproc);
  std::string threads_text;
  if (set_in_env("OPENBLAS_NUM_THREADS") || set_in_env("OMP_NUM_THREADS")) {
    threads_text = "the thread counts you set (OPENBLAS_NUM_THREADS, OMP_NUM_THREADS)";
  } else {
    spec.extra_env.emplace_back("OMP_NUM_THREADS", std::to_string(threads));
    spec.extra_env.emplace_back("OPENBLAS_NUM_THREADS", std::to_string(threads));
    threads_text = std::to_string(threads) + (threads == 1 ? " thread" : " threads") + " each (" +
                   std::to_string(cpus) + " CPUs / " + std::to_string(nproc) + " processes)";
  }
  if (cpu_bind) spec.extra_env.emplace_back("NUBO_CPU_BIND", "1");

  const bool gpu = gpus > 0;
  std::string transport;
  if (nproc > 1) transport = nubo::transport_between(true, gpu) + " between this node's processes";
  if (nnodes > 1) {
    transport += std::string(transport.empty() ? "" : ", ") + nubo::transport_between(false, gpu) +
                 " between nodes";
  }
  std::fprintf(stderr, "nubo-run: %d process%s on this node (ranks %d-%d of %d), %s%s%s\n", nproc,
               nproc == 1 ? "" : "es", node_rank * nproc, node_rank * nproc + nproc - 1,
               nnodes * nproc, threads_text.c_str(), transport.empty() ? "" : "; ",
               transport.c_str());

  if (max_restarts > 0 && nnodes > 1)
    return fail(
        "--max-restarts restarts the processes of one node; a job on several nodes is "
        "restarted by its scheduler (or torchrun's elastic agent)");
  // Each attempt meets at a rendezvous of its own, so that nothing an earlier attempt left
  // there is taken for this one's.
  const std::string base_rendezvous = spec.rendezvous;
  const auto base_env = spec.extra_env;
  // A spot machine's interruption notice: the processes get SIGTERM at once (to checkpoint and
  // exit 75), before the machine's own SIGTERM.
  nubo::InterruptionWatcher watcher([](const nubo::InterruptionNotice& n) {
    std::fprintf(stderr, "nubo-run: interruption notice from %s (%s): stopping the job\n",
                 n.cloud.c_str(), n.action.c_str());
    nubo::run::deliver_signal(SIGTERM);
  });
  int status = 0;
  // The backoff doubles with each failure in a row of attempts that failed soon after they
  // started (a crash loop); an attempt that ran for a while (a spot machine lost mid-run)
  // starts it over at 1 s, so that a long job reclaimed now and then restarts at once.
  constexpr auto kRanWell = std::chrono::seconds(10);
  int quick_failures = 0;
  for (int attempt = 0;; ++attempt) {
    spec.extra_env = base_env;
    spec.extra_env.emplace_back("NUBO_RESTART_COUNT", std::to_string(attempt));
    spec.extra_env.emplace_back("TORCHELASTIC_RESTART_COUNT", std::to_string(attempt));
    if (attempt > 0 && base_rendezvous.rfind("tcp://", 0) != 0)
      spec.rendezvous = base_rendezvous + "/attempt-" + std::to_string(attempt);
    const auto started = std::chrono::steady_clock::now();
    const auto outcome = nubo::run::launch(spec);
    status = outcome.status;
    quick_failures =
        std::chrono::steady_clock::now() - started >= kRanWell ? 0 : quick_failures + 1;
    if (status == 0 || status == nubo::run::kExitResume || outcome.stop_signal != 0) break;
    if (attempt >= max_restarts) {
      if (max_restarts > 0)
        std::fprintf(stderr, "nubo-run: the job failed %d times (attempts 1 to %d); giving up\n",
                     attempt + 1, attempt + 1);
      break;
    }
    const int backoff = std::min(30, 1 << std::clamp(quick_failures - 1, 0, 5));
    std::fprintf(stderr,
                 "nubo-run: attempt %d of %d failed; starting the job again in %d s "
                 "(NUBO_RESTART_COUNT=%d)\n",
                 attempt + 1, max_restarts + 1, backoff, attempt + 1);
    if (const int sig = nubo::run::pause_for(std::chrono::seconds(backoff))) {
      status = 128 + sig;
      break;
    }
  }
  if (!made_dir.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(made_dir, ec);
  }
  return status;
}
