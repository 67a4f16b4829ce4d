// Joining a job whatever started it: the variables of nubo-run, torchrun (and Kubernetes'
// PyTorchJob), Slurm's srun, Open MPI's mpirun and SkyPilot, read in that order (the first
// launcher whose variables are set wins; docs/parallel.md has the table). Each launcher's
// variables are checked as the launcher documents them: a rank outside the world, a number that
// is not one, or half of a launcher's variables is an invalid_argument naming the variable.
#pragma once

#include <optional>
#include <string>

namespace nubo::parallel {

struct LaunchedJob {
  std::string launcher;      // "nubo-run", "torchrun", "slurm", "mpirun", "skypilot"
  int rank = 0;              // this process in the job
  int world_size = 1;        // processes in the job
  int local_rank = 0;        // this process among those on its host
  int local_world_size = 0;  // processes on its host; 0: the launcher did not say
  bool whole_node = false;   // one process per host, holding all its GPUs (SkyPilot)
  // Where the processes meet: NUBO_RENDEZVOUS when set, else tcp://MASTER_ADDR:MASTER_PORT+1
  // when MASTER_ADDR is set (torch.distributed's own store has MASTER_PORT), else what the
  // launcher's own variables give (a folder for a job on one host; rank 0's host for Slurm and
  // SkyPilot).
  std::string rendezvous;
};

// nullopt when no launcher's variables are set (a process alone).
std::optional<LaunchedJob> launched_job();

}  // namespace nubo::parallel
