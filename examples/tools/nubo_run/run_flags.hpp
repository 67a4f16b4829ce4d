// nubo-run's flags, as given on the command line: main() adds them, run_job() reads them.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace nubo_run {

struct RunFlags {
  int nproc = 0, node_rank = 0, master_port = 29500;
  std::string nnodes_text = "1", rendezvous, job_id, master_addr, rendezvous_timeout = "30s";
  double grace = 5.0;
  int max_restarts = 0;
  bool cpu_bind = false, exclude_unhealthy = false;
  double watch_health = 0;
  std::vector<std::string> command;
  bool master_port_given = false;  // --master-port was on the command line
};

// The flags (and the program to run) on `app`, each writing into `f`, with the help's footer.
void add_run_flags(CLI::App& app, RunFlags& f);

}  // namespace nubo_run
