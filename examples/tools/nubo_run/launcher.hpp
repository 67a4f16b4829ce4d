// Starts the processes of a job and watches them: their output, prefixed with their rank; the
// signals nubo-run receives, passed on; and their ends. When one process fails, the others get
// a grace period to finish on their own (they are likely reporting the failure, naming the
// rank), then SIGTERM, then after the same period SIGKILL.
#pragma once

#include <chrono>
#include <string>
#include <utility>
#include <vector>

namespace nubo::run {

struct LaunchSpec {
  std::vector<std::string> command;  // program and its arguments
  int nproc = 1;                     // processes on this node
  int node_rank = 0;
  int world_size = 1;       // processes in the whole job
  std::string rendezvous;   // NUBO_RENDEZVOUS for every process
  std::string master_addr;  // MASTER_ADDR and MASTER_PORT, for torch.distributed
  int master_port = 0;
  // More variables for every process (the thread counts, NUBO_CPU_BIND).
  std::vector<std::pair<std::string, std::string>> extra_env;
  std::chrono::milliseconds grace{5000};
};

// The status a process exits with when it saved its state on SIGTERM and wants to be resumed
// (sysexits' EX_TEMPFAIL); nubo-train uses it. It is a clean stop, not a failure.
constexpr int kExitResume = 75;

struct Outcome {
  int status = 0;                   // nubo-run's exit status for this run of the job (below)
  int stop_signal = 0;              // the signal nubo-run was stopped with, if any: no restart then
  bool stopped_for_health = false;  // stop_attempt() ended it: a GPU failed
};

// Runs the job to its end. The status: 0 when every process exited 0; 75 when they stopped
// cleanly to be resumed (each exited 0 or 75, at least one 75; after SIGTERM to nubo-run, all
// of them 75); else the first failure's exit status, or 128 + its signal; 128 + the signal
// nubo-run was stopped with. Explains failures on stderr, naming the rank.
Outcome launch(const LaunchSpec& spec);

// Acts as if nubo-run had received `sig` (passes it on to the processes, and stops restarts):
// for an interruption notice, from any thread.
void deliver_signal(int sig);

// Ends the attempt in flight as a failure of the machine, from any thread: the processes get
// SIGTERM (then SIGKILL after the grace period), and launch() returns kExitResume with
// stopped_for_health set; restarts go on.
void stop_attempt();

// Waits `how_long`, or less when nubo-run gets a signal: returns it (0 when none came).
int pause_for(std::chrono::milliseconds how_long);

// A loopback TCP port nobody listens on now (for MASTER_PORT on a single node).
int free_port();

}  // namespace nubo::run
