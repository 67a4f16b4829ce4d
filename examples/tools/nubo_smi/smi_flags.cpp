#include "smi_flags.hpp"

#include "cli.hpp"

namespace nubo_smi {

void add_smi_flags(CLI::App& app, SmiFlags& f) {
  app.add_flag("--json", f.json, "print the report as JSON");
  app.add_flag("--require-gpu", f.require_gpu, "exit with status 3 when no GPU is usable");
  app.add_option("--sim", f.sim, "simulated devices, e.g. 8xA100-SXM4-80GB (as NUBO_SIM_DEVICES)");
  app.add_flag("--no-cuda", f.no_cuda, "skip the CUDA probe");
  app.add_option("--select", f.select, "show the best-connected group of N GPUs (0: all)")
      ->check(nubo_cli::Range(0, 1024));
  app.add_option("--preflight", f.preflight_file,
                 "with --select: leave out the GPUs this nubo-smi check --json report did not "
                 "find healthy")
      ->check(CLI::ExistingFile);
  f.topo = app.add_subcommand("topo", "print the GPU link matrix, like nvidia-smi topo -m");
  f.topo->fallthrough();  // options of nubo-smi work after "topo" too

  f.health_cmd = app.add_subcommand(
      "health", "XID, ECC, remapped rows, throttling, PCIe, NVLink, Fabric Manager, processes");
  f.health_cmd->fallthrough();
  f.health_cmd->add_option("--xid-policy", f.health_options.xid_policy_file,
                           "override the XID table: lines 'XID STATUS ACTION', e.g. "
                           "'79 fail drain-node'");
  f.health_cmd
      ->add_option("--wait", f.health_options.wait_seconds, "seconds to wait for new XID events")
      ->check(nubo_cli::Range(0, 86400));
  f.health_cmd->add_option("--kernel-log", f.health_options.kernel_log_file,
                           "a saved kernel log (dmesg) to read XIDs from instead of /dev/kmsg");

  f.check_cmd = app.add_subcommand(
      "check", "measure each GPU, link and the host against what its model should do");
  f.check_cmd->fallthrough();
  f.check_cmd->add_flag("--quick", f.check_options.quick, "about 10 s instead of 60");
  f.check_cmd->add_option("--budget", f.check_options.budget_seconds, "seconds to spend in all")
      ->check(nubo_cli::Range(1, 3600));
  f.check_cmd
      ->add_option("--threshold", f.check_options.threshold,
                   "below this fraction of expected a figure is degraded (default 0.8)")
      ->check(nubo_cli::Range(0.01, 1));
  f.check_cmd->add_option("--devices", f.check_options.devices, "GPUs to check (default: all)")
      ->delimiter(',');
  f.check_cmd->add_flag("--no-host", f.no_host, "skip the host's GEMM and memory bandwidth");
  f.check_cmd->add_option("--out", f.out_file, "also write the JSON report to this file");
}

}  // namespace nubo_smi
