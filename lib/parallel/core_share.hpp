// How the workers of one process share the host's cores, so that nothing is oversubscribed:
//  - the process's cores: the CPUs it may run on when a launcher already restricted them (srun
//    --cpu-bind, mpirun's binding); otherwise its slice of the host's CPUs, split evenly among
//    the job's processes on the host;
//  - its thread budget: OPENBLAS_NUM_THREADS, else OMP_NUM_THREADS, when set (nubo-run and
//    torchrun set them to each process's share), else the number of its cores;
//  - each host worker's GEMMs run on budget / workers threads (at least 1);
//  - with binding, each worker is pinned to its own contiguous slice of the process's cores,
//    within one NUMA node where the workers can be spread over the nodes.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/env.hpp"
#include "device/host/host_cores.hpp"

namespace nubo::parallel {

struct CoreShare {
  int threads = 1;                     // each worker's GEMM threads
  std::vector<int> process_cpus;       // the CPUs the process's workers share
  std::vector<std::vector<int>> cpus;  // per worker, with binding: the CPUs it is pinned to
  std::string reason;                  // where the thread count came from, for the report
};

struct CoreShareInput {
  int workers = 1;          // host workers in this process
  int local_process = 0;    // this process among the job's processes on the host
  int local_processes = 1;  // the job's processes on the host
  bool bind = false;
  std::vector<detail::HostCore> allowed;  // detail::allowed_cores()
  int online = 1;                         // detail::online_cpus()
  std::optional<env::BlasThreads> env_threads;
};

CoreShare share_cores(const CoreShareInput& in);

// `cpus` split into `parts` contiguous slices of nearly equal size (the first ones one larger);
// with more parts than CPUs, part i gets CPU i modulo their number.
std::vector<std::vector<int>> split_evenly(const std::vector<int>& cpus, int parts);

}  // namespace nubo::parallel
