// nubo-run: starts the processes of a data-parallel job and watches them.
//
//   nubo-run -n 4 -- ./train --epochs 3
//   nubo-run -n 8 --nnodes 2 --node-rank 0 --master-addr head -- ./train     (on each node)
//   nubo-run -n 8 --nnodes 2 --node-rank 1 --rendezvous redis://head:6379 --job-id run7 -- ./train
//
// Each process gets NUBO_RANK, NUBO_LOCAL_RANK, NUBO_WORLD_SIZE, NUBO_LOCAL_WORLD_SIZE and
// NUBO_RENDEZVOUS, which nubo::Team::from_env() reads, and torchrun's RANK, LOCAL_RANK,
// WORLD_SIZE, LOCAL_WORLD_SIZE, MASTER_ADDR and MASTER_PORT, so that a torch.distributed script
// runs unchanged; see docs/parallel.md.
#include <CLI/CLI.hpp>

#include "cli.hpp"
#include "run_flags.hpp"
#include "run_job.hpp"

int main(int argc, char** argv) {
  CLI::App app{
      "Starts the processes of a nubo job, prefixes their output with their rank, "
      "and stops them all when one fails.",
      "nubo-run"};
  nubo_run::RunFlags flags;
  nubo_run::add_run_flags(app, flags);
  nubo_cli::add_version(app, "nubo-run");
  if (const int status = nubo_cli::parse(app, argc, argv); status >= 0) return status;
  return nubo_run::run_job(flags);
}
