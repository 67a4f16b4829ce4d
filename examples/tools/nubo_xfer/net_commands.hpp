// nubo-xfer send and serve (docs/net.md): the network subcommands, kept beside main.cpp.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>
#include <vector>

#include "command.hpp"
#include "selection.hpp"

namespace nubo_xfer {

struct NetCommands {
  CLI::App* send = nullptr;
  CLI::App* serve = nullptr;
  std::vector<std::string> sources;  // send: SRC... then HOST:PORT[/SUBDIR] last
  std::string codec = "auto", chunk_size = "4M", rate = "0", memory = "64M", token_file,
              listen = "127.0.0.1:7878", dest, ca_file, server_name, cert_file, key_file;
  int level = 0, threads = 0, streams = 4, max_connections = 64;
  std::string timeout = "30s", handshake_timeout = "10s";
  bool json = false, quiet = false, no_sync = false, no_encryption = false, mkdir = false,
       require_encryption = false, preserve_special_modes = false;
  Selection selection;  // send: --exclude, --include, --dry-run
  bool parsed() const { return send->parsed() || serve->parsed(); }
};

// send and serve as one row of the command table: nubo::Error escapes to main's handler (exit
// codes as for pack).
nubo_cli::Command net_command(CLI::App& app);

}  // namespace nubo_xfer
