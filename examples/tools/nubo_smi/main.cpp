// nubo-smi: the devices nubo sees, like nvidia-smi, with the reasons a GPU is not usable.
//
//   nubo-smi                 the device table and the diagnoses
//   nubo-smi topo            the link matrix, like `nvidia-smi topo -m`
//   nubo-smi --json          the whole report as JSON (docs/device-report.schema.json)
//   nubo-smi --select N      the best-connected group of N GPUs
//   nubo-smi --require-gpu   exit with status 3 when no GPU is usable
#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>

#include "cli.hpp"
#include "nubo/nubo.hpp"
#include "table.hpp"

namespace {
constexpr int kExitNoGpu = 3;
constexpr int kExitError = 1;
}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"nubo-smi: the GPUs and the CPU nubo can use, their links, and what is wrong"};
  bool json = false, require_gpu = false, no_cuda = false;
  std::string sim;
  int select = -1;
  app.add_flag("--json", json, "print the whole report as JSON");
  app.add_flag("--require-gpu", require_gpu, "exit with status 3 when no GPU is usable");
  app.add_option("--sim", sim, "simulated devices, e.g. 8xA100-SXM4-80GB (as NUBO_SIM_DEVICES)");
  app.add_flag("--no-cuda", no_cuda, "skip the CUDA probe");
  app.add_option("--select", select, "show the best-connected group of N GPUs (0: all)")
      ->check(nubo_cli::Range(0, 1024));
  auto* topo = app.add_subcommand("topo", "print the GPU link matrix, like nvidia-smi topo -m");
  topo->fallthrough();  // options of nubo-smi work after "topo" too
  nubo_cli::add_version(app, "nubo-smi");
  if (const int status = nubo_cli::parse(app, argc, argv); status >= 0) return status;

  try {
    nubo::DiscoverOptions options;
    if (!sim.empty()) options.sim_devices = sim;
    options.probe_cuda = !no_cuda;
    auto report = nubo::discover(options);
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
      auto group = report.select(request);
      std::cout << "\nBest-connected group of " << group.size() << ":";
      for (const auto& d : group) std::cout << " GPU" << d.index;
      std::cout << "\n";
    }
    if (require_gpu && !report.has_gpu()) {
      std::fprintf(stderr, "nubo-smi: no GPU is usable (--require-gpu)\n");
      return kExitNoGpu;
    }
    return 0;
  } catch (const nubo::Error& e) {
    nubo_cli::print_error("nubo-smi", e.what());
    return kExitError;
  }
}
