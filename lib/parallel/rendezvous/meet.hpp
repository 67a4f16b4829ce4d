// Joining a job of several processes through the rendezvous store: each process publishes who
// it is and waits for the others, so that the team starts only when everyone is there and
// agrees on the job's shape. Problems are named: ranks that never came (after the timeout), a
// world size or a device count that differs between processes.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "parallel/rendezvous/store.hpp"

namespace nubo::parallel {

struct ProcessInfo {
  int world_size = 0;   // NUBO_WORLD_SIZE as this process has it
  int local_size = 0;   // workers the process holds
  std::string host;     // its host name
  std::string host_id;  // host_identity(): processes with the same one share memory
  long pid = 0;
};

// Publishes `me` as process `rank` under "proc/<rank>" and waits up to `timeout` for every other
// process of the world; returns all of them, indexed by rank.
std::vector<ProcessInfo> meet(Store& store, int rank, const ProcessInfo& me,
                              std::chrono::milliseconds timeout);

// The record format, for the tests.
std::string encode(const ProcessInfo& info);
ProcessInfo decode(const std::string& record, int rank, const std::string& where);

// Process p of a job whose processes hold `workers` workers each, for messages: "rank 3" (one
// worker each), or "process 1 (ranks 2 to 3)".
std::string process_name(int p, int workers);

// This host's name (gethostname), for the records and messages.
std::string host_name();

// Who counts as this host for sharing memory: NUBO_HOST_ID when set, else the boot id and the
// host name. Containers on one kernel share its boot id but have host names (and /dev/shm) of
// their own.
std::string host_identity();

}  // namespace nubo::parallel
