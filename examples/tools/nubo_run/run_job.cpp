#include "run_job.hpp"

#include <sched.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <random>

#include "cli.hpp"
#include "health_guard.hpp"
#include "launcher.hpp"
#include "nubo/error.hpp"
#include "nubo/interruption.hpp"
#include "nubo/nubo.hpp"
#include "nubo/retry.hpp"

namespace nubo_run {
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

// A node count of --nnodes, 1 .. `most`: Error(invalid_argument) naming what is wrong.
int node_count(const std::string& text, int most) {
  int n = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc() || end != text.data() + text.size() || n < 1 || n > most)
    throw nubo::Error(nubo::Errc::invalid_argument,
                      "--nnodes: '" + text + "' is not a node count from 1 to " +
                          std::to_string(most) + " (give N, or MIN:MAX for an elastic job)");
  return n;
}

}  // namespace

int run_job(RunFlags f) {
  auto fail = [](const std::string& m) {
    nubo_cli::print_error("nubo-run", m);
    return 2;
  };
  int min_nodes = 1, nnodes = 1;
  double last_call_s = 0;
  try {
    const auto colon = f.nnodes_text.find(':');
    nnodes = node_count(
        colon == std::string::npos ? f.nnodes_text : f.nnodes_text.substr(colon + 1), 4096);
    min_nodes =
        colon == std::string::npos ? nnodes : node_count(f.nnodes_text.substr(0, colon), nnodes);
    last_call_s = nubo::parse_duration(f.rendezvous_timeout, "--rendezvous-timeout");
  } catch (const nubo::Error& e) {
    return fail(e.what());
  }
  const bool elastic = min_nodes < nnodes || (f.max_restarts > 0 && nnodes > 1);
  if (f.node_rank >= nnodes) {
    return fail("--node-rank " + std::to_string(f.node_rank) + " is not below --nnodes " +
                std::to_string(nnodes));
  }
  for (char c : f.job_id) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') {
      return fail("--job-id '" + f.job_id + "' may hold letters, digits, '-', '_' and '.' only");
    }
  }

  // The devices, for the default process count and the transport between the processes.
  int gpus = 0;
  try {
    for (const auto& d : nubo::discover().devices) gpus += d.backend == nubo::Backend::host ? 0 : 1;
  } catch (const nubo::Error&) {  // no devices to be found: the processes run on the CPU
  }
  if (f.nproc == 0) f.nproc = std::max(gpus, 1);
  if (static_cast<long>(nnodes) * f.nproc > 65536) {
    return fail("--nnodes x --nproc is more than 65536 processes");
  }

  // Where the processes meet: a job's own namespace inside a given file or Redis location, so
  // that keys of an earlier job there are never mistaken for this one's; a tcp:// store that
  // rank 0 hosts for this job only; or a fresh folder on a single node.
  std::string made_dir;  // a folder nubo-run created, removed at the end
  try {
    if (f.rendezvous.empty() && nnodes > 1) {
      if (f.master_addr.empty()) {
        return fail(
            "a job on several nodes needs --master-addr (node 0's address: the processes meet "
            "at a store that rank 0 hosts there), or --rendezvous: a folder every node shares "
            "(file:///shared/dir) or a Redis server (redis://host:6379)");
      }
      const bool v6 = f.master_addr.find(':') != std::string::npos;
      f.rendezvous = "tcp://" + (v6 ? "[" + f.master_addr + "]" : f.master_addr) + ":" +
                     std::to_string(f.master_port + 1);
      nubo::check_rendezvous(f.rendezvous, "--master-addr and --master-port");
    } else if (f.rendezvous.empty()) {
      const char* tmp = std::getenv("TMPDIR");
      std::string tmpl = std::string(tmp && *tmp ? tmp : "/tmp") + "/nubo-run-XXXXXX";
      if (::mkdtemp(tmpl.data()) == nullptr) return fail("cannot create a temporary folder");
      made_dir = tmpl;
      f.rendezvous = "file://" + made_dir;
    } else {
      nubo::check_rendezvous(f.rendezvous, "--rendezvous");
      // A file:// folder is shared between the nodes, so it must be there already: making it
      // would hide a typo, or a mount that is missing on this node.
      if (std::error_code ec; f.rendezvous.rfind("file://", 0) == 0 &&
                              !std::filesystem::is_directory(f.rendezvous.substr(7), ec)) {
        return fail("--rendezvous " + f.rendezvous + ": the folder " + f.rendezvous.substr(7) +
                    " does not exist (make it, or mount the shared one)");
      }
      const bool redis_with_job = f.rendezvous.rfind("redis://", 0) == 0 &&
                                  f.rendezvous.find('/', 8) != std::string::npos &&
                                  f.rendezvous.back() != '/';
      // A tcp:// store is the job's own: rank 0 hosts it for this job only.
      const bool own_store = f.rendezvous.rfind("tcp://", 0) == 0;
      if (!redis_with_job && !own_store) {
        if (f.job_id.empty() && nnodes > 1) {
          return fail(
              "a job on several nodes needs --job-id NAME, the same on every node, so "
              "that they find each other and not an earlier job");
        }
        if (f.job_id.empty()) f.job_id = random_job_id();
        while (!f.rendezvous.empty() && f.rendezvous.back() == '/') f.rendezvous.pop_back();
        f.rendezvous += "/" + f.job_id;
        if (f.rendezvous.rfind("file://", 0) == 0 && nnodes == 1) made_dir = f.rendezvous.substr(7);
      }
      nubo::check_rendezvous(f.rendezvous, "--rendezvous with --job-id");
    }
  } catch (const nubo::Error& e) {
    return fail(e.what());
  }

  nubo::run::LaunchSpec spec;
  spec.command = f.command;
  spec.nproc = f.nproc;
  spec.node_rank = f.node_rank;
  spec.world_size = nnodes * f.nproc;
  spec.rendezvous = f.rendezvous;
  spec.grace = std::chrono::milliseconds(static_cast<long long>(f.grace * 1000));
  // torch.distributed's store: node 0's, or on one node a free loopback port.
  spec.master_addr = f.master_addr.empty() ? "127.0.0.1" : f.master_addr;
  spec.master_port = f.master_port;
  if (nnodes == 1 && !f.master_port_given) spec.master_port = nubo::run::free_port();

  // Each process's share of the CPUs, as torchrun does with OMP_NUM_THREADS, unless set.
  const int cpus = usable_cpus();
  const int threads = std::max(1, cpus / f.nproc);
  std::string threads_text;
  if (set_in_env("OPENBLAS_NUM_THREADS") || set_in_env("OMP_NUM_THREADS")) {
    threads_text = "the thread counts you set (OPENBLAS_NUM_THREADS, OMP_NUM_THREADS)";
  } else {
    spec.extra_env.emplace_back("OMP_NUM_THREADS", std::to_string(threads));
    spec.extra_env.emplace_back("OPENBLAS_NUM_THREADS", std::to_string(threads));
    threads_text = std::to_string(threads) + (threads == 1 ? " thread" : " threads") + " each (" +
                   std::to_string(cpus) + " CPUs / " + std::to_string(f.nproc) + " processes)";
  }
  if (f.cpu_bind) spec.extra_env.emplace_back("NUBO_CPU_BIND", "1");

  const bool gpu = gpus > 0;
  std::string transport;
  if (f.nproc > 1)
    transport = nubo::transport_between(true, gpu) + " between this node's processes";
  if (nnodes > 1) {
    transport += std::string(transport.empty() ? "" : ", ") + nubo::transport_between(false, gpu) +
                 " between nodes";
  }
  std::fprintf(stderr, "nubo-run: %d process%s on this node (ranks %d-%d of %d), %s%s%s\n", f.nproc,
               f.nproc == 1 ? "" : "es", f.node_rank * f.nproc, f.node_rank * f.nproc + f.nproc - 1,
               nnodes * f.nproc, threads_text.c_str(), transport.empty() ? "" : "; ",
               transport.c_str());

  if (elastic && f.rendezvous.rfind("tcp://", 0) == 0)
    return fail(
        "an elastic job (--nnodes MIN:MAX, or --max-restarts on several nodes) needs a "
        "rendezvous that outlives every node: --rendezvous file:///shared/dir or "
        "redis://host:6379, with --job-id; the store at --master-addr lives in rank 0's process");
  nubo::ElasticOptions elastic_options;
  elastic_options.min_nodes = min_nodes;
  elastic_options.max_nodes = nnodes;
  elastic_options.last_call = std::chrono::milliseconds(static_cast<long long>(last_call_s * 1000));
  int stopped_by = 0;  // a signal that came while the nodes met
  elastic_options.pause = [&](std::chrono::milliseconds d) {
    stopped_by = nubo::run::pause_for(d);
    return stopped_by == 0;
  };
  int round = -1;
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
  // started (a crash loop). After an attempt that ran for a while, or one whose first failure
  // was a process killed by SIGKILL (from outside: a reclaimed machine's processes, the OOM
  // killer, an operator), the job starts again at once: every second waited there is a second
  // of the machines paid for and idle, on every interruption, however soon it came.
  constexpr auto kRanWell = std::chrono::seconds(10);
  // 1 s, 2 s, 4 s ... 30 s; the same waits on every node, so no jitter.
  const nubo::RetryPolicy restarts{f.max_restarts + 1, 1.0, 30.0, false};
  int quick_failures = 0;
  bool ended = false;  // for good: nodes still waiting to join are told to stop
  nubo::run::HealthGuard health(f.watch_health, f.exclude_unhealthy);
  for (int attempt = 0;; ++attempt) {
    spec.extra_env = base_env;
    spec.extra_env.emplace_back("NUBO_RESTART_COUNT", std::to_string(attempt));
    spec.extra_env.emplace_back("TORCHELASTIC_RESTART_COUNT", std::to_string(attempt));
    if (elastic) {
      // The nodes agree on who takes part in this attempt: each is a round of its own.
      try {
        const auto r =
            nubo::join_elastic_round(base_rendezvous, f.node_rank, round, elastic_options);
        round = r.round;
        spec.node_rank = r.node_index;
        spec.world_size = r.nodes() * f.nproc;
        spec.rendezvous = base_rendezvous + "/round-" + std::to_string(round);
        std::fprintf(stderr, "nubo-run: round %d: %d of %d nodes; this node's ranks %d-%d of %d\n",
                     round, r.nodes(), nnodes, r.node_index * f.nproc,
                     r.node_index * f.nproc + f.nproc - 1, spec.world_size);
      } catch (const nubo::Error& e) {
        nubo_cli::print_error("nubo-run", e.what());
        status = stopped_by ? 128 + stopped_by : e.code() == nubo::Errc::cancelled ? 0 : 1;
        break;
      }
    } else if (attempt > 0 && base_rendezvous.rfind("tcp://", 0) != 0) {
      spec.rendezvous = base_rendezvous + "/attempt-" + std::to_string(attempt);
    }
    const auto started = std::chrono::steady_clock::now();
    try {
      health.start();
    } catch (const nubo::Error& e) {
      nubo_cli::print_error("nubo-run", std::string("--watch-health: ") + e.what());
      status = 1;
      break;
    }
    const auto outcome = nubo::run::launch(spec);
    status = outcome.status;
    if (health.finish()) {
      // A GPU failed: elsewhere (or without it) the job can go on from its checkpoint.
      status = nubo::run::kExitResume;
      if (restarts.again(attempt + 1) && health.exclude_failed()) {
        std::fprintf(stderr,
                     "nubo-run: starting the job again without it (NUBO_RESTART_COUNT=%d)\n",
                     attempt + 1);
        continue;
      }
      std::fprintf(stderr,
                   "nubo-run: the job stopped for a failed GPU (status 75): start it "
                   "again elsewhere, or with --exclude-unhealthy\n");
      ended = true;
      break;
    }
    const bool interrupted = status == 128 + SIGKILL;
    quick_failures = interrupted || std::chrono::steady_clock::now() - started >= kRanWell
                         ? 0
                         : quick_failures + 1;
    if (status == 0 || status == nubo::run::kExitResume || outcome.stop_signal != 0) {
      ended = status == 0;
      break;
    }
    if (!restarts.again(attempt + 1)) {
      if (f.max_restarts > 0)
        std::fprintf(stderr, "nubo-run: the job failed %d times (attempts 1 to %d); giving up\n",
                     attempt + 1, attempt + 1);
      ended = true;
      break;
    }
    const int backoff =
        quick_failures == 0 ? 0 : static_cast<int>(restarts.base_delay_s(quick_failures));
    std::fprintf(stderr,
                 "nubo-run: attempt %d of %d failed; starting the job again %s "
                 "(NUBO_RESTART_COUNT=%d)\n",
                 attempt + 1, f.max_restarts + 1,
                 backoff == 0 ? "at once" : ("in " + std::to_string(backoff) + " s").c_str(),
                 attempt + 1);
    if (const int sig = nubo::run::pause_for(std::chrono::seconds(backoff))) {
      status = 128 + sig;
      break;
    }
  }
  if (elastic && ended) {
    try {
      nubo::finish_elastic_job(base_rendezvous, status);
    } catch (const nubo::Error& e) {
      nubo_cli::print_error("nubo-run", e.what());
    }
  }
  if (!made_dir.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(made_dir, ec);
  }
  return status;
}

}  // namespace nubo_run
