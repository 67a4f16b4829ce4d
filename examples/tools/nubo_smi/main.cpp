// nubo-smi: the devices nubo sees, like nvidia-smi, with the reasons a GPU is not usable.
//
//   nubo-smi                 the device table and the diagnoses
//   nubo-smi topo            the link matrix, like `nvidia-smi topo -m`
//   nubo-smi health          what NVML and the kernel log say of each GPU's health
//   nubo-smi check           the preflight: each GPU and link measured against its model
//   nubo-smi --json          the whole report as JSON (docs/device-report.schema.json)
//   nubo-smi --select N      the best-connected group of N GPUs (--preflight FILE: healthy ones)
//   nubo-smi --require-gpu   exit with status 3 when no GPU is usable
//
// Exit statuses of health and check: 0 healthy, 4 degraded (warn), 5 unusable (fail), 1 error.
#include <CLI/CLI.hpp>

#include "cli.hpp"
#include "smi_flags.hpp"
#include "smi_run.hpp"

int main(int argc, char** argv) {
  CLI::App app{"nubo-smi: the GPUs and the CPU nubo can use, their links, and what is wrong"};
  nubo_smi::SmiFlags flags;
  nubo_smi::add_smi_flags(app, flags);
  nubo_cli::add_version(app, "nubo-smi");
  if (const int status = nubo_cli::parse(app, argc, argv); status >= 0) return status;
  return nubo_smi::run_smi(flags);
}
