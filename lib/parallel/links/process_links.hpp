// Which link a team of host-memory workers uses between its processes, and making it:
//  - all on one host: shared memory (shm_link.hpp);
//  - one process per host: Gloo over TCP (gloo_link.hpp);
//  - several hosts, several processes on some: shared memory inside each host and Gloo between
//    one leader per host (hierarchical_link.hpp).
// NUBO_SHM_DISABLE=1 makes it Gloo everywhere (on one host, over loopback).
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "parallel/links/hierarchical_link.hpp"
#include "parallel/links/remote.hpp"
#include "parallel/rendezvous/meet.hpp"
#include "parallel/rendezvous/store.hpp"

namespace nubo::parallel {

// The transport between two processes of a team: "NCCL" (GPU workers), "shm" (host workers on
// one host, unless NUBO_SHM_DISABLE=1) or "Gloo/TCP".
std::string transport_name(bool same_host, bool gpu);

// The processes grouped by host (ProcessInfo::host_id), hosts in the order of their first rank.
HostLayout host_layout(const std::vector<ProcessInfo>& all, int rank);

struct ProcessLinks {
  std::shared_ptr<Remote> remote;
  std::string transport;  // for the report: "shm", "Gloo/TCP", "shm + Gloo/TCP between 3 hosts"
};

// `all` is the meeting's result; `store` the team's view of the rendezvous store.
ProcessLinks link_processes(const std::shared_ptr<Store>& store, int rank, int workers,
                            const std::vector<ProcessInfo>& all, std::chrono::milliseconds timeout);

}  // namespace nubo::parallel
