// The logical CPUs this process may run on, with where each sits (NUMA node, socket, core), for
// sharing them among workers and processes (lib/parallel/core_share.hpp).
#pragma once

#include <vector>

namespace nubo::detail {

struct HostCore {
  int cpu = 0;      // the logical CPU's number (as taskset and sched_setaffinity count)
  int node = 0;     // its NUMA node
  int package = 0;  // its socket
  int core = 0;     // its physical core within the socket (hyperthreads share one)
};

// sched_getaffinity's CPUs, ordered by node, socket, core, then number: a contiguous run stays
// within one node and keeps a core's hyperthreads together. Where /sys does not say, node,
// socket and core are 0, 0 and the CPU's number.
std::vector<HostCore> allowed_cores();

// The CPUs online in the machine, whether or not this process may use them.
int online_cpus();

// Pins the calling thread to `cpus`; Error(internal) naming the CPUs when the kernel refuses.
void pin_calling_thread(const std::vector<int>& cpus);

}  // namespace nubo::detail
