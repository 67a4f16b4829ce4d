#include "run_flags.hpp"

#include "cli.hpp"

namespace nubo_run {

void add_run_flags(CLI::App& app, RunFlags& f) {
  app.add_option("--nproc,-n", f.nproc,
                 "Processes on this node (default: one per GPU of this machine, else 1)")
      ->check(nubo_cli::Range(1, 4096));
  app.add_option("--nnodes", f.nnodes_text,
                 "Nodes in the job (each runs nubo-run): N, or MIN:MAX for an elastic job that "
                 "goes on with fewer nodes (at least MIN) when some do not come back");
  app.add_option("--node-rank", f.node_rank, "This node, 0 .. nnodes - 1 (MAX - 1 when elastic)")
      ->check(nubo_cli::NonNegativeNumber);
  app.add_option("--rendezvous-timeout", f.rendezvous_timeout,
                 "Elastic jobs: how long a round waits for more nodes once MIN have come, "
                 "e.g. 30s (the default) or 2m");
  app.add_option("--master-addr", f.master_addr,
                 "Node 0's address: with --nnodes > 1, the processes meet at a store that rank 0 "
                 "hosts there (tcp://ADDR:PORT+1), with no shared folder");
  app.add_option("--master-port", f.master_port,
                 "MASTER_PORT for torch.distributed; nubo's own store listens on the next port "
                 "(default 29500 across nodes, a free port on one)")
      ->check(nubo_cli::Range(1, 65534))
      ->each([&f](const std::string&) { f.master_port_given = true; });
  app.add_option("--rendezvous", f.rendezvous,
                 "Where the processes meet instead: file:///shared/dir, tcp://host:port or "
                 "redis://host:port (default: a fresh temporary folder on one node)");
  app.add_option("--job-id", f.job_id,
                 "Names the job in a file or Redis rendezvous; the same on every node (default: "
                 "a fresh one, single node only)");
  app.add_option("--grace", f.grace,
                 "Seconds the other processes get to finish after one fails, before SIGTERM "
                 "(and again before SIGKILL)")
      ->check(nubo_cli::Range(0.0, 3600.0));
  app.add_option("--max-restarts", f.max_restarts,
                 "When a process fails, stop them all and start the job again, up to N times "
                 "(backoff 1 s, 2 s, 4 s ... 30 s while attempts fail within 10 s of their start, "
                 "none after one that ran longer or lost a process to SIGKILL); each attempt "
                 "sees NUBO_RESTART_COUNT")
      ->check(nubo_cli::Range(0, 1000));
  app.add_option("--watch-health", f.watch_health,
                 "Read the GPUs' health every SECONDS during the job (docs/preflight.md): a new "
                 "fatal XID or double-bit ECC error stops the job at once, naming the GPU, with "
                 "exit status 75 (0: off)")
      ->check(nubo_cli::Range(0.0, 3600.0));
  app.add_flag("--exclude-unhealthy", f.exclude_unhealthy,
               "With --watch-health and --max-restarts: start again without the GPU that failed "
               "(CUDA_VISIBLE_DEVICES)");
  app.add_flag("--cpu-bind", f.cpu_bind,
               "Pin each process's host workers to cores of their own (NUBO_CPU_BIND=1), "
               "NUMA-aware");
  app.add_option("command", f.command, "The program to run, and its arguments (after --)")
      ->required();
  app.footer(
      "Each process gets NUBO_RANK (node-rank * nproc + its index), NUBO_LOCAL_RANK, "
      "NUBO_WORLD_SIZE (nnodes * nproc), NUBO_LOCAL_WORLD_SIZE and NUBO_RENDEZVOUS; torchrun's "
      "RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, MASTER_ADDR and MASTER_PORT; and, "
      "unless set, OMP_NUM_THREADS and OPENBLAS_NUM_THREADS = usable CPUs / nproc. Exit "
      "status: 0 when all succeed; 75 when they saved their state and stopped to be resumed "
      "(after SIGTERM, all of them); else the failed rank's exit status, or 128 + its signal. "
      "Elastic jobs (--nnodes MIN:MAX) meet at a file:// or redis:// rendezvous before each "
      "attempt and go on with the nodes that came (docs/parallel.md, \"Elastic jobs\").");
}

}  // namespace nubo_run
