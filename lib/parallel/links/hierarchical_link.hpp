// The Remote of a job on several hosts with several processes on some of them: shared memory
// inside each host (shm_link.hpp) and Gloo between one leader per host (its lowest rank), like
// NCCL's shared-memory transport inside a node and the network between nodes:
//  - reduce: each host reduces its processes' buffers (in process order), the leaders
//    all-reduce the hosts' sums (in host order), and each leader broadcasts the result on its
//    host. The order is fixed, so every process gets the same bits, run after run: within a
//    host, processes in rank order; then the hosts, in the order of their first ranks.
//  - broadcast: on the root's host, then between leaders, then on the other hosts.
//  - gather: gathered on each host, exchanged between leaders (padded to the largest
//    host), put in rank order by each leader and broadcast on its host.
//  - exchange: every input gathered on each host, blocks exchanged between leaders per pair of
//    hosts (padded to the largest host), broadcast on each host, each taking its own.
//  - barrier: on each host, between leaders, on each host again.
// Each step checks the processes' calls against each other, as the links do alone.
#pragma once

#include <memory>
#include <vector>

#include "parallel/links/remote.hpp"

namespace nubo::parallel {

struct HostLayout {
  std::vector<std::vector<int>> hosts;  // job ranks of each host's processes, in rank order
  int host = 0;                         // this process's host
  int member = 0;                       // this process's index among its host's
  int world = 1;                        // processes in the job
};

// `in_host`: the link among this host's processes (null when it has one); `leaders`: the link
// among the hosts' leaders (null unless this process is its host's leader).
std::shared_ptr<Remote> make_hierarchical(std::shared_ptr<Remote> in_host,
                                          std::shared_ptr<Remote> leaders, HostLayout layout);

}  // namespace nubo::parallel
