#include <algorithm>
#include <cmath>
#include <string>

#include "nubo/cost.hpp"
#include "nubo/error.hpp"

namespace nubo::cost {

HostScale scale_on_host(const Profile& p, const HostScaleRequest& r) {
  auto bad = [&](const std::string& why) {
    return Error(Errc::invalid_argument, "profile " + p.source + ": " + why);
  };
  // Only host workers' times are the host's: a GPU's are not, and simulated GPUs' (host threads
  // standing in for GPUs) are neither the host's workers nor the GPU's.
  if (p.backend == "cuda")
    throw bad("measured on GPUs: scaling on a host's cores is for host (cpu) workers");
  if (p.backend != "cpu")
    throw bad("measured on " +
              (p.backend == "sim" ? std::string("simulated GPUs (NUBO_SIM_DEVICES)")
                                  : "backend '" + p.backend + "'") +
              ": scaling on a host's cores is for profiles of host (cpu) workers");
  if (p.host_threads <= 0 || p.gemm_time_s <= 0 || (p.host_cpus <= 0 && r.cpus <= 0))
    throw bad(
        "it lacks devices.host_threads, devices.host_cpus or per_step.gemm_s (measure it again "
        "with this nubo's nubo-train)");
  if (r.workers < 1 || r.workers > 1 << 16 || r.processes < 1 || r.processes > r.workers ||
      r.workers % r.processes != 0)
    throw Error(Errc::invalid_argument, "workers (" + std::to_string(r.workers) +
                                            ") must be a positive multiple of " + "processes (" +
                                            std::to_string(r.processes) + ")");
  if (!(r.link_gbps > 0 && r.link_gbps < 1e6))
    throw Error(Errc::invalid_argument, "link_gbps must be positive");
  const int cpus = r.cpus > 0 ? r.cpus : p.host_cpus;
  const double n1 = p.devices, n = r.workers;
  HostScale s;
  s.threads_per_worker = std::max(1, cpus / r.workers);
  // Each worker has n1/n of a profile worker's rows. Its GEMMs ran on host_threads threads and
  // now run on threads_per_worker (thread scaling taken as linear); the rest of its compute is
  // one thread's either way. More workers than CPUs take turns.
  const double rows = n1 / n;
  const double oversubscribed = std::max(1.0, n * s.threads_per_worker / static_cast<double>(cpus));
  s.gemm_s = p.gemm_time_s * rows * p.host_threads / s.threads_per_worker * oversubscribed;
  s.compute_s = s.gemm_s + (p.compute_time_s - p.gemm_time_s) * rows * oversubscribed;
  // A bandwidth-optimal all-reduce moves 2(n - 1)/n of the gradients per worker.
  s.communication_s = n > 1 ? 2 * (n - 1) / n * p.allreduce_bytes / (r.link_gbps * 1e9) : 0;
  s.step_s = s.compute_s + s.communication_s;
  s.samples_per_s = p.global_batch / s.step_s;
  s.run_s = s.step_s * p.steps;
  return s;
}

}  // namespace nubo::cost
