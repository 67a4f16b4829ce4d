// nubo-train: trains an MLP classifier on Fashion-MNIST, data-parallel on the chosen devices,
// with checkpoints that survive spot interruptions (docs/train.md).
//
//   nubo-train --epochs 10 --hidden 256,128                 # all GPUs, else the CPU
//   nubo-train --devices cpu:2 --checkpoint ckpt             # continues from ckpt when there
//   nubo-run --nproc 2 nubo-train --devices cpu              # two processes
//
// Exit status: 0 done, 1 error, 2 bad usage, 75 stopped by SIGTERM after checkpointing (run
// the same command again to continue).
#include <CLI/CLI.hpp>

#include "cli.hpp"
#include "train_flags.hpp"
#include "train_run.hpp"

int main(int argc, char** argv) {
  CLI::App app{"nubo-train: data-parallel MLP training on Fashion-MNIST"};
  nubo_train::TrainFlags flags;
  nubo_train::add_train_flags(app, flags);
  nubo_cli::add_version(app, "nubo-train");
  if (const int status = nubo_cli::parse(app, argc, argv); status >= 0) return status;
  return nubo_train::run_training(flags);
}
