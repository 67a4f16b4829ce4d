// Team: running a function on every worker, and the public API around it.
#include <mutex>
#include <thread>

#include "common/env.hpp"
#include "common/text.hpp"
#include "device/host/host_cores.hpp"
#include "nubo/error.hpp"
#include "parallel/launch/launchers.hpp"
#include "parallel/links/process_links.hpp"
#include "parallel/rendezvous/rendezvous_url.hpp"
#include "parallel/team_state.hpp"

namespace nubo {
namespace detail {

void TeamState::add_worker(std::unique_ptr<WorkerState> w) {
  w->worker.reset(new Worker(w.get()));
  workers.push_back(std::move(w));
}

void TeamState::abort(const std::string& cause) noexcept {
  try {
    if (group) group->abort("cancelled because " + cause);
  } catch (...) {  // out of memory for the message: the group still fails, with less to say
  }
  if (remote) remote->abort(cause);
  for (auto& w : workers)
    if (w->comm) w->comm->request_abort(cause);  // NCCL: acted on by the rank's own thread
}

TeamState::~TeamState() {
  health.reset();  // before anything it could abort goes away
  // Communicators go first (their progress threads stop), then the group and the link.
  for (auto& w : workers) w->comm.reset();
}

std::string TeamState::describe() const {
  std::string out;
  for (const auto& w : workers) {
    out += "rank " + std::to_string(w->rank) + ": " + w->backend->describe();
    if (w->backend->host_accessible()) {
      std::string threads;
      try {
        const int n = w->backend->host_threads();
        threads = std::to_string(n) + (n == 1 ? " GEMM thread" : " GEMM threads");
      } catch (const Error& e) {  // no OpenBLAS: say so rather than fail the report
        threads = e.what();
      }
      out += ", " + threads + " (" + cores + ")";
    }
    if (!w->cpus.empty()) {
      std::vector<std::string> cpus;
      for (int c : w->cpus) cpus.push_back(std::to_string(c));
      out += ", pinned to CPUs " + text::join(cpus, ",");
    }
    out += "\n";
  }
  const int processes = size / std::max(1, static_cast<int>(workers.size()));
  if (processes > 1)
    out += "between the " + std::to_string(processes) + " processes: " + transport + "\n";
  return out;
}

void TeamState::run(const std::function<void(Worker&)>& fn) {
  if (running.exchange(true)) {
    throw Error(Errc::invalid_argument,
                "Team::run is already running: a worker cannot start its own team's run");
  }
  struct Reset {
    std::atomic<bool>& flag;
    ~Reset() { flag = false; }
  } reset_running{running};

  std::mutex mutex;
  std::exception_ptr first;
  auto on_failure = [&](int rank, std::exception_ptr e) {
    std::lock_guard<std::mutex> lock(mutex);
    if (first) return;
    first = e;
    std::string what = "unknown exception";
    try {
      std::rethrow_exception(e);
    } catch (const std::exception& x) {
      what = x.what();
    } catch (...) {
    }
    abort("rank " + std::to_string(rank) + " failed: " + what);
  };

  std::vector<std::thread> threads;
  threads.reserve(workers.size());
  try {
    for (auto& w : workers) {
      WorkerState* ws = w.get();
      threads.emplace_back([&, ws] {
        try {
          if (!ws->cpus.empty()) pin_calling_thread(ws->cpus);
          fn(*ws->worker);
        } catch (...) {
          on_failure(ws->rank, std::current_exception());
        }
      });
    }
  } catch (...) {  // a thread could not start: stop the ones that did
    on_failure(rank_offset, std::current_exception());
  }
  for (auto& t : threads) t.join();
  // One process's team can start afresh; the group refuses if its cross-process link failed.
  if (group) group->reset();
  if (first) std::rethrow_exception(first);
}

}  // namespace detail

// --- Public API ------------------------------------------------------------------------------

JobSpec JobSpec::from_env() {
  JobSpec spec;
  if (auto j = parallel::launched_job()) {
    spec.rank = j->rank;
    spec.local_rank = j->local_rank;
    spec.world_size = j->world_size;
    spec.local_world_size = j->local_world_size;
    spec.rendezvous = j->rendezvous;
    spec.launcher = j->launcher;
    spec.whole_node = j->whole_node;
    if (spec.world_size > 1)
      parallel::parse_rendezvous(spec.rendezvous,
                                 j->launcher == "nubo-run"
                                     ? "NUBO_RENDEZVOUS"
                                     : "the rendezvous from " + j->launcher + "'s variables");
  }
  return spec;
}

std::string transport_between(bool same_host, bool gpu) {
  return parallel::transport_name(same_host, gpu);
}

void check_rendezvous(std::string_view url, std::string_view what) {
  parallel::parse_rendezvous(url, what);
}

Team::Team(const std::vector<Device>& devices, const TeamOptions& options)
    : state_(detail::TeamState::create(devices, JobSpec{}, false, options)) {}

Team::Team(const std::vector<Device>& devices, const JobSpec& job, const TeamOptions& options)
    : state_(detail::TeamState::create(devices, job, false, options)) {}

Team Team::all(const TeamOptions& options) {
  auto report = discover();
  std::vector<Device> devices;
  if (report.has_gpu()) {
    try {
      devices = report.select({.count = 0});
    } catch (const Error& e) {
      if (e.code() != Errc::unavailable) throw;
    }
  }
  if (devices.empty()) devices.push_back(report.host_device());
  return Team(devices, options);
}

Team Team::host(int workers, const TeamOptions& options) {
  if (workers < 1 || workers > 1024) {
    throw Error(Errc::invalid_argument,
                "Team::host: " + std::to_string(workers) + " workers; use 1 to 1024");
  }
  DiscoverOptions d;
  d.probe_cuda = false;
  d.sim_devices = "";
  return Team(std::vector<Device>(static_cast<std::size_t>(workers), discover(d).host_device()),
              options);
}

Team Team::join(const TeamOptions& options) {
  Team team = from_env(options);
  if (team.local_size() == 1) {
    const auto& cpus = team.state_->workers.front()->cpus;
    if (!cpus.empty()) detail::pin_calling_thread(cpus);
  }
  return team;
}

Team Team::from_env(const TeamOptions& options) {
  const JobSpec job = JobSpec::from_env();
  auto report = discover();
  std::vector<Device> devices;
  if (report.has_gpu() && job.whole_node) {
    devices = report.devices;
  } else if (report.has_gpu()) {
    devices.push_back(
        report.devices[static_cast<std::size_t>(job.local_rank) % report.devices.size()]);
  } else {
    devices.push_back(report.host_device());
  }
  return Team(detail::TeamState::create(devices, job, true, options));
}

Team Team::from_env(const std::vector<Device>& devices, const TeamOptions& options) {
  return Team(detail::TeamState::create(devices, JobSpec::from_env(), true, options));
}

Team::Team(std::unique_ptr<detail::TeamState> state) : state_(std::move(state)) {}
Team::Team(Team&&) noexcept = default;
Team& Team::operator=(Team&&) noexcept = default;
Team::~Team() = default;

int Team::size() const {
  return state_->size;
}
int Team::local_size() const {
  return static_cast<int>(state_->workers.size());
}
std::string Team::describe() const {
  return state_->describe();
}
std::chrono::milliseconds Team::timeout() const {
  return state_->timeout;
}

Worker& Team::worker(int local_rank) {
  if (local_rank < 0 || local_rank >= local_size()) {
    throw Error(Errc::invalid_argument, "worker " + std::to_string(local_rank) +
                                            " is out of range: this process has " +
                                            std::to_string(local_size()) + " workers");
  }
  return *state_->workers[static_cast<std::size_t>(local_rank)]->worker;
}

Worker& Team::worker() {
  if (local_size() != 1) {
    throw Error(Errc::invalid_argument,
                "this process has " + std::to_string(local_size()) +
                    " workers: take one with worker(i), or run a function on each with run()");
  }
  return *state_->workers.front()->worker;
}

void Team::run(const std::function<void(Worker&)>& fn) {
  if (!fn) throw Error(Errc::invalid_argument, "Team::run: the function is empty");
  state_->run(fn);
}

}  // namespace nubo
