// nubo-smi's flags and subcommands, as given on the command line: main() adds them, run_smi()
// reads them.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "nubo/nubo.hpp"

namespace nubo_smi {

struct SmiFlags {
  bool json = false, require_gpu = false, no_cuda = false;
  std::string sim, preflight_file;
  int select = -1;
  nubo::device::HealthOptions health_options;
  nubo::device::PreflightOptions check_options;
  std::string out_file;
  bool no_host = false;
  CLI::App* topo = nullptr;  // the subcommands, to tell which was given
  CLI::App* health_cmd = nullptr;
  CLI::App* check_cmd = nullptr;
};

// The options and the topo, health and check subcommands on `app`, each writing into `f`.
void add_smi_flags(CLI::App& app, SmiFlags& f);

}  // namespace nubo_smi
