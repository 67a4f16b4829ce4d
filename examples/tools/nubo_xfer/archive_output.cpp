#include "archive_output.hpp"

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "chunks_json.hpp"
#include "cli.hpp"
#include "nubo/units.hpp"

namespace nubo_xfer {

namespace xfer = nubo::transfer;

void add_common(CLI::App* cmd, Common& c, bool pipeline) {
  if (pipeline) {
    cmd->add_option("--threads", c.threads, "compression/decompression threads (0: every core)")
        ->check(nubo_cli::Range(0, 1024));
    cmd->add_option("--memory", c.memory, "memory for buffers in flight, e.g. 64M (default)");
    cmd->add_flag("--quiet,-q", c.quiet, "no progress display");
  }
  cmd->add_flag("--json", c.json, "print a JSON summary on stdout");
}

namespace {

nlohmann::json summary_json(const std::string& operation, const xfer::Summary& s) {
  double ratio =
      s.bytes > 0 ? static_cast<double>(s.bytes_stored) / static_cast<double>(s.bytes) : 0;
  return {{"operation", operation},
          {"files", s.files},
          {"directories", s.directories},
          {"symlinks", s.symlinks},
          {"bytes", s.bytes},
          {"bytes_stored", s.bytes_stored},
          {"bytes_skipped", s.bytes_skipped},
          {"ratio", ratio},
          {"chunks", nubo_xfer::chunks_json("total", s.chunks, s.chunks_by_codec)},
          {"seconds", s.seconds},
          {"rate", s.seconds > 0 ? static_cast<double>(s.bytes) / s.seconds : 0},
          {"resumed", s.resumed},
          {"up_to_date", s.up_to_date},
          {"bytes_transferred", s.bytes_transferred},
          {"network_wait_seconds", s.network_wait_seconds}};
}

}  // namespace

void report(const std::string& operation, const xfer::Summary& s, const Common& c) {
  if (c.json) {
    std::cout << summary_json(operation, s).dump(2) << "\n";
    return;
  }
  if (c.quiet) return;
  auto moved = s.bytes - std::min(s.bytes, s.bytes_skipped);
  std::fprintf(
      stderr, "nubo-xfer: %s %s, %s -> %s (ratio %.3f) in %.2f s, %s/s", operation.c_str(),
      nubo_cli::count_of(s.files, "file").c_str(),
      nubo::format_bytes(static_cast<double>(s.bytes), 2).c_str(),
      nubo::format_bytes(static_cast<double>(s.bytes_stored), 2).c_str(),
      s.bytes ? static_cast<double>(s.bytes_stored) / static_cast<double>(s.bytes) : 0.0, s.seconds,
      nubo::format_bytes(s.seconds > 0 ? static_cast<double>(moved) / s.seconds : 0, 2).c_str());
  // Skipped bytes are either work an interrupted attempt did (resumed) or files found intact:
  // "already done" would read as the latter's being redone work, which it is not.
  if (s.bytes_skipped > 0) {
    std::fprintf(stderr,
                 s.resumed ? ", %s resumed from an interrupted attempt"
                           : ", %s already in place (verified, kept)",
                 nubo::format_bytes(static_cast<double>(s.bytes_skipped), 2).c_str());
  }
  if (s.bytes_transferred > 0) {
    std::fprintf(stderr, ", %s %s the network (%.2f s waited on it)",
                 nubo::format_bytes(static_cast<double>(s.bytes_transferred), 2).c_str(),
                 operation == "packed" ? "over" : "fetched over", s.network_wait_seconds);
  }
  std::fprintf(stderr, "\n");
}

}  // namespace nubo_xfer
