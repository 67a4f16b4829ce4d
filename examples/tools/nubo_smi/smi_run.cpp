#include "smi_run.hpp"

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>

#include "check.hpp"
#include "cli.hpp"
#include "nubo/nubo.hpp"
#include "stop_signals.hpp"
#include "table.hpp"

namespace nubo_smi {
namespace {
constexpr int kExitNoGpu = 3;
constexpr int kExitError = 1;
constexpr int kExitInterrupted = 130;

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  if (!(out << text << "\n")) throw nubo::Error(nubo::Errc::io, path + ": cannot be written");
}
}  // namespace

int run_smi(SmiFlags f) {
  try {
    nubo::DiscoverOptions options;
    if (!f.sim.empty()) options.sim_devices = f.sim;
    options.probe_cuda = !f.no_cuda;
    auto report = nubo::discover(options);
    // --require-gpu is a gate for every command (a job script's `nubo-smi health
    // --require-gpu`): after what the command prints, no usable GPU is exit status 3, whatever
    // the command itself would have said of the machine.
    const auto gated = [&](int status) {
      if (!f.require_gpu || report.has_gpu()) return status;
      std::fprintf(stderr, "nubo-smi: no GPU is usable (--require-gpu)\n");
      return kExitNoGpu;
    };
    if (f.health_cmd->parsed()) {
      const auto h = nubo::device::health(report, f.health_options);
      std::cout << (f.json ? h.to_json() + "\n" : nubo_smi::health_text(h));
      return gated(h.exit_status());
    }
    if (f.check_cmd->parsed()) {
      // Ctrl-C stops after the work in flight: nothing is left running on a GPU.
      nubo_cli::handle_stop_signals(kExitInterrupted, std::chrono::seconds(30));
      f.check_options.host = !f.no_host;
      f.check_options.should_stop = [] { return nubo_cli::stop_requested.load(); };
      const auto r = nubo::device::preflight(report, f.check_options);
      if (!f.out_file.empty()) write_file(f.out_file, r.to_json());
      std::cout << (f.json ? r.to_json() + "\n" : nubo_smi::preflight_text(r));
      return gated(r.exit_status());
    }
    if (f.json) {
      std::cout << report.to_json() << "\n";
    } else if (f.topo->parsed()) {
      if (report.devices.empty())
        std::cout << "No GPU: there is no topology to show.\n";
      else
        std::cout << nubo_smi::topology_matrix(report);
      std::cout << nubo_smi::diagnoses_text(report);
    } else {
      std::cout << nubo_smi::device_table(report) << nubo_smi::diagnoses_text(report);
    }
    if (f.select >= 0) {
      nubo::SelectRequest request;
      request.count = f.select;
      if (!f.preflight_file.empty()) {
        request = nubo::device::exclude_unhealthy(
            request, nubo::device::PreflightReport::load(f.preflight_file));
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

}  // namespace nubo_smi
