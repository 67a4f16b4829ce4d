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
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>

#include "check.hpp"
#include "cli.hpp"
#include "nubo/nubo.hpp"
#include "stop_signals.hpp"
#include "table.hpp"

namespace {
constexpr int kExitNoGpu = 3;
constexpr int kExitError = 1;
constexpr int kExitInterrupted = 130;

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  if (!(out << text << "\n")) throw nubo::Error(nubo::Errc::io, path + ": cannot be written");
}
}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"nubo-smi: the GPUs and the CPU nubo can use, their links, and what is wrong"};
  bool json = false, require_gpu = false, no_cuda = false;
  std::string sim, preflight_file;
  int select = -1;
  app.add_flag("--json", json, "print the report as JSON");
  app.add_flag("--require-gpu", require_gpu, "exit with status 3 when no GPU is usable");
  app.add_option("--sim", sim, "simulated devices, e.g. 8xA100-SXM4-80GB (as NUBO_SIM_DEVICES)");
  app.add_flag("--no-cuda", no_cuda, "skip the CUDA probe");
  app.add_option("--select", select, "show the best-connected group of N GPUs (0: all)")
      ->check(nubo_cli::Range(0, 1024));
  app.add_option("--preflight", preflight_file,
                 "with --select: leave out the GPUs this nubo-smi check --json report did not "
                 "find healthy")
      ->check(CLI::ExistingFile);
  auto* topo = app.add_subcommand("topo", "print the GPU link matrix, like nvidia-smi topo -m");
  topo->fallthrough();  // options of nubo-smi work after "topo" too

  auto* health_cmd = app.add_subcommand(
      "health", "XID, ECC, remapped rows, throttling, PCIe, NVLink, Fabric Manager, processes");
  health_cmd->fallthrough();
  nubo::device::HealthOptions health_options;
  health_cmd->add_option("--xid-policy", health_options.xid_policy_file,
                         "override the XID table: lines 'XID STATUS ACTION', e.g. "
                         "'79 fail drain-node'");
  health_cmd
      ->add_option("--wait", health_options.wait_seconds, "seconds to wait for new XID events")
      ->check(nubo_cli::Range(0, 86400));
  health_cmd->add_option("--kernel-log", health_options.kernel_log_file,
                         "a saved kernel log (dmesg) to read XIDs from instead of /dev/kmsg");

  auto* check_cmd = app.add_subcommand(
      "check", "measure each GPU, link and the host against what its model should do");
  check_cmd->fallthrough();
  nubo::device::PreflightOptions check_options;
  std::string out_file;
  check_cmd->add_flag("--quick", check_options.quick, "about 10 s instead of 60");
  check_cmd->add_option("--budget", check_options.budget_seconds, "seconds to spend in all")
      ->check(nubo_cli::Range(1, 3600));
  check_cmd
      ->add_option("--threshold", check_options.threshold,
                   "below this fraction of expected a figure is degraded (default 0.8)")
      ->check(nubo_cli::Range(0.01, 1));
  check_cmd->add_option("--devices", check_options.devices, "GPUs to check (default: all)")
      ->delimiter(',');
  bool no_host = false;
  check_cmd->add_flag("--no-host", no_host, "skip the host's GEMM and memory bandwidth");
  check_cmd->add_option("--out", out_file, "also write the JSON report to this file");
  nubo_cli::add_version(app, "nubo-smi");
  if (const int status = nubo_cli::parse(app, argc, argv); status >= 0) return status;

  try {
    nubo::DiscoverOptions options;
    if (!sim.empty()) options.sim_devices = sim;
    options.probe_cuda = !no_cuda;
    auto report = nubo::discover(options);
    // --require-gpu is a gate for every command (a job script's `nubo-smi health
    // --require-gpu`): after what the command prints, no usable GPU is exit status 3, whatever
    // the command itself would have said of the machine.
    const auto gated = [&](int status) {
      if (!require_gpu || report.has_gpu()) return status;
      std::fprintf(stderr, "nubo-smi: no GPU is usable (--require-gpu)\n");
      return kExitNoGpu;
    };
    if (health_cmd->parsed()) {
      const auto h = nubo::device::health(report, health_options);
      std::cout << (json ? h.to_json() + "\n" : nubo_smi::health_text(h));
      return gated(h.exit_status());
    }
    if (check_cmd->parsed()) {
      // Ctrl-C stops after the work in flight: nothing is left running on a GPU.
      nubo_cli::handle_stop_signals(kExitInterrupted, std::chrono::seconds(30));
      check_options.host = !no_host;
      check_options.should_stop = [] { return nubo_cli::stop_requested.load(); };
      const auto r = nubo::device::preflight(report, check_options);
      if (!out_file.empty()) write_file(out_file, r.to_json());
      std::cout << (json ? r.to_json() + "\n" : nubo_smi::preflight_text(r));
      return gated(r.exit_status());
    }
    if (json) {
      std::cout << report.to_json() << "\n";
    } else if (topo->parsed()) {
      if (report.devices.empty())
        std::cout << "No GPU: there is no topology to show.\n";
      else
        std::cout << nubo_smi::topology_matrix(report);
      std::cout << nubo_smi::diagnoses_text(report);
    } else {
      std::cout << nubo_smi::device_table(report) << nubo_smi::diagnoses_text(report);
    }
    if (select >= 0) {
      nubo::SelectRequest request;
      request.count = select;
      if (!preflight_file.empty()) {
        request = nubo::device::exclude_unhealthy(
            request, nubo::device::PreflightReport::load(preflight_file));
        for (const auto& e : request.exclude)
          std::cout << "GPU " << e.device << " left out: " << e.reason << "\n";
      }
      auto group = report.select(request);
      std::cout << "\nBest-connected group of " << group.size() << ":";
      for (const auto& d : group) std::cout << " GPU" << d.index;
      std::cout << "\n";
    }
    return gated(0);
  } catch (const nubo::Error& e) {
    if (e.code() == nubo::Errc::cancelled) {
      nubo_cli::print_error("nubo-smi", "interrupted; no work is left on the GPUs");
      return kExitInterrupted;
    }
    nubo_cli::print_error("nubo-smi", e.what());
    return kExitError;
  }
}
