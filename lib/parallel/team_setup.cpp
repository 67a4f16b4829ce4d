// Making a team: checking the devices, their backends, and for a job of several processes the
// rendezvous, the meeting of the processes and the link between them; then a communicator per
// worker (shared memory and Gloo, or NCCL).
#include <unistd.h>

#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "common/env.hpp"
#include "device/host/host_cores.hpp"
#include "device/host/openblas_copies.hpp"
#include "nubo/error.hpp"
#include "parallel/communicators/host_communicator.hpp"
#include "parallel/communicators/nccl_communicator.hpp"
#include "parallel/core_share.hpp"
#include "parallel/links/process_links.hpp"
#include "parallel/rendezvous/meet.hpp"
#include "parallel/rendezvous/rendezvous_url.hpp"
#include "parallel/team_state.hpp"

namespace nubo::detail {
namespace {

// NCCL's view of the team's store, for exchanging its unique id across processes.
class StoreBytes final : public RendezvousBytes {
 public:
  explicit StoreBytes(parallel::Store& store) : store_(store) {}
  void set(const std::string& key, const std::string& bytes) override { store_.set(key, bytes); }
  std::string get(const std::string& key, std::chrono::milliseconds timeout) override {
    return store_.get(key, timeout);
  }

 private:
  parallel::Store& store_;
};

std::string device_name(const Device& d) {
  if (d.backend == Backend::host) return "the host CPU";
  return std::string(backend_name(d.backend)) + " device " + std::to_string(d.index) + " (" +
         d.name + ")";
}

// Teams made from one rendezvous in one process are numbered, so that each finds its own keys:
// every process of a job makes its teams in the same order.
int next_team_number(const std::string& rendezvous) {
  static std::mutex mutex;
  static std::map<std::string, int> counters;
  std::lock_guard<std::mutex> lock(mutex);
  return counters[rendezvous]++;
}

std::vector<std::unique_ptr<Communicator>> nccl_in_processes(
    const std::vector<std::shared_ptr<DeviceBackend>>& backends, int rank_offset, int size,
    parallel::Store& store, std::chrono::milliseconds timeout) {
  // ncclCommInitRank of all local ranks must run at the same time: one thread each.
  const std::size_t k = backends.size();
  std::vector<std::unique_ptr<Communicator>> comms(k);
  std::vector<std::exception_ptr> errors(k);
  StoreBytes bytes(store);
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < k; ++i) {
    threads.emplace_back([&, i] {
      try {
        comms[i] = make_nccl_communicator(*backends[i], rank_offset + static_cast<int>(i), size,
                                          bytes, timeout);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    });
  }
  for (auto& t : threads) t.join();
  for (auto& e : errors) {
    if (e) std::rethrow_exception(e);
  }
  return comms;
}

// Gives each host worker its share of the host's cores (core_share.hpp): an OpenBLAS with its
// thread count, and with binding the CPUs it is pinned to.
void share_host_cores(const std::vector<std::shared_ptr<DeviceBackend>>& backends,
                      int local_process, int local_processes, bool bind, int threads,
                      std::vector<std::vector<int>>& pinned, std::string& reason) {
  parallel::CoreShareInput in;
  in.workers = static_cast<int>(backends.size());
  in.local_process = local_process;
  in.local_processes = local_processes;
  in.bind = bind;
  in.allowed = allowed_cores();
  in.online = online_cpus();
  in.env_threads =
      threads > 0 ? env::BlasThreads{"TeamOptions::gemm_threads", threads} : env::blas_threads();
  const parallel::CoreShare share = parallel::share_cores(in);
  reason = share.reason;
  pinned = share.cpus;
  pinned.resize(backends.size());
  auto blas = std::make_shared<BlasShare>(in.workers, share.threads, pinned);
  for (std::size_t i = 0; i < backends.size(); ++i)
    backends[i]->use_openblas(blas, static_cast<int>(i));
}

// The watch reads the health of these devices; its finding aborts the team with the GPU named.
void watch_health(TeamState& st, const std::vector<Device>& devices, double seconds) {
  DeviceReport report;
  for (const auto& d : devices)
    if (d.backend != Backend::host) report.devices.push_back(d);
  if (report.devices.empty()) return;  // the CPU has no health report
  st.health = std::make_unique<device::HealthWatch>(
      report, seconds, [&st](const device::Finding& f) { st.abort(device::failure_text(f)); });
}

}  // namespace

std::unique_ptr<TeamState> TeamState::create(const std::vector<Device>& devices, const JobSpec& job,
                                             bool job_from_env, const TeamOptions& options) {
  if (devices.empty()) {
    throw Error(Errc::invalid_argument,
                "a team needs at least one device (DeviceReport::select gave none?)");
  }
  std::set<std::pair<int, int>> seen;
  for (const auto& d : devices) {
    if (d.backend == Backend::host) continue;  // the CPU may serve several workers
    if (!seen.insert({static_cast<int>(d.backend), d.index}).second) {
      throw Error(Errc::invalid_argument, device_name(d) +
                                              " is listed twice: a team has one worker per "
                                              "device (only the host CPU may repeat)");
    }
  }
  if (job.world_size < 1 || job.rank < 0 || job.rank >= job.world_size) {
    throw Error(Errc::invalid_argument, "job rank " + std::to_string(job.rank) +
                                            " is not in [0, world size " +
                                            std::to_string(job.world_size) + ")");
  }
  if (options.timeout.count() < 0 || options.timeout > std::chrono::hours(24))
    throw Error(Errc::invalid_argument,
                "TeamOptions::timeout must be between 0 (the default) and 24 h, got " +
                    std::to_string(options.timeout.count()) + " ms");
  if (options.gemm_threads < 0 || options.gemm_threads > 4096)
    throw Error(Errc::invalid_argument,
                "TeamOptions::gemm_threads must be between 0 (the default) and 4096, got " +
                    std::to_string(options.gemm_threads));
  if (!(options.health_watch_seconds >= 0) || options.health_watch_seconds > 3600)
    throw Error(Errc::invalid_argument,
                "TeamOptions::health_watch_seconds must be between 0 (off) and 3600, got " +
                    std::to_string(options.health_watch_seconds));
  auto st = std::make_unique<TeamState>();
  st->timeout =
      options.timeout.count() > 0 ? options.timeout : env::timeout().value_or(kDefaultTimeout);
  const int k = static_cast<int>(devices.size());

  std::vector<std::shared_ptr<DeviceBackend>> backends;
  for (const auto& d : devices) backends.push_back(std::shared_ptr<DeviceBackend>(make_backend(d)));
  bool host_memory = true, cuda = true;
  for (const auto& b : backends) {
    host_memory = host_memory && b->host_accessible();
    cuda = cuda && b->device().backend == Backend::cuda;
  }
  if (!host_memory && !cuda) {
    throw Error(Errc::invalid_argument,
                "a team cannot mix CUDA devices with host or simulated ones: their memories "
                "need different communicators (NCCL, shared memory)");
  }

  st->size = k * job.world_size;
  st->rank_offset = k * job.rank;
  int local_process = 0, local_processes = 1;  // this process among the job's on its host
  if (job.world_size > 1) {
    const auto url = parallel::parse_rendezvous(
        job.rendezvous, job_from_env ? "NUBO_RENDEZVOUS" : "JobSpec::rendezvous");
    std::shared_ptr<parallel::Store> base = parallel::open_store(url, job.rank == 0, st->timeout);
    st->store = parallel::prefixed(base, "team" + std::to_string(next_team_number(url.text)) + "/");
    parallel::ProcessInfo me;
    me.world_size = job.world_size;
    me.local_size = k;
    me.host = parallel::host_name();
    me.host_id = parallel::host_identity();
    me.pid = static_cast<long>(::getpid());
    const auto all = parallel::meet(*st->store, job.rank, me, st->timeout);
    const parallel::HostLayout layout = parallel::host_layout(all, job.rank);
    local_process = layout.member;
    local_processes = static_cast<int>(layout.hosts[static_cast<std::size_t>(layout.host)].size());
    if (host_memory) {
      auto links = parallel::link_processes(st->store, job.rank, k, all, st->timeout);
      st->remote = std::move(links.remote);
      st->transport = std::move(links.transport);
    } else {
      st->transport = "NCCL";
    }
  }

  std::vector<std::vector<int>> pinned(backends.size());
  if (host_memory)
    share_host_cores(backends, local_process, local_processes, options.cpu_bind || env::cpu_bind(),
                     options.gemm_threads, pinned, st->cores);

  std::vector<std::unique_ptr<Communicator>> nccl;
  if (host_memory) {
    st->group = std::make_shared<parallel::LocalGroup>(k, st->rank_offset, st->size, st->timeout,
                                                       st->remote);
  } else if (job.world_size == 1) {
    std::vector<DeviceBackend*> raw;
    for (auto& b : backends) raw.push_back(b.get());
    nccl = make_nccl_communicators(raw, st->timeout);
  } else {
    nccl = nccl_in_processes(backends, st->rank_offset, st->size, *st->store, st->timeout);
  }

  for (int i = 0; i < k; ++i) {
    auto w = std::make_unique<WorkerState>();
    w->local = i;
    w->rank = st->rank_offset + i;
    w->size = st->size;
    w->local_size = k;
    w->backend = backends[static_cast<std::size_t>(i)];
    w->cpus = pinned[static_cast<std::size_t>(i)];
    if (host_memory) {
      w->comm = std::make_unique<parallel::HostCommunicator>(st->group, i);
    } else {
      w->comm = std::move(nccl[static_cast<std::size_t>(i)]);
    }
    st->add_worker(std::move(w));
  }
  if (options.health_watch_seconds > 0) watch_health(*st, devices, options.health_watch_seconds);
  return st;
}

}  // namespace nubo::detail
