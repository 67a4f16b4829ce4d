// nubo-xfer: compressed, resumable archives (docs/transfer.md).
//
//   nubo-xfer pack SRC... -o OUT.nubo   files and directories into an archive
//   nubo-xfer unpack ARCHIVE -C DIR     an archive into a directory
//   nubo-xfer list ARCHIVE              its entries (-l: with sizes; --json)
//   nubo-xfer verify ARCHIVE            every checksum, nothing written
//   nubo-xfer cat ARCHIVE PATH          one file to stdout
//   nubo-xfer serve --dest DIR          receive sends (docs/net.md)
//   nubo-xfer send SRC... HOST:PORT     send files to a serve, resumably
//   nubo-xfer cp SRC DST                files and trees to and from s3://, gs://, file:// stores
//
// Interrupted (Ctrl-C, kill -9, power loss), pack and unpack resume when run again with the same
// arguments. Exit status, as rclone splits them: 0 done, 1 error (fatal: retrying will not
// help), 2 bad usage, 3 damaged or refused data, 5 temporary (the peer was unreachable, busy or
// the connection was lost: run the same command again), 130 interrupted (run it again to
// resume).
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <vector>

#include "archive_commands.hpp"
#include "cli.hpp"
#include "command.hpp"
#include "cp_command.hpp"
#include "net_commands.hpp"
#include "nubo/error.hpp"
#include "read_commands.hpp"
#include "stop_signals.hpp"

namespace {

constexpr int kExitError = 1;
using nubo_cli::kExitUsage;
constexpr int kExitCorrupt = 3;
constexpr int kExitRetry = 5;
constexpr int kExitInterrupted = 130;

// The first interrupt stops the work at its next step (a send first delivers what it has
// queued, for at most 5 s), and ends the program kStopGrace later if the work has not ended; a
// second one ends it at once. Either way what was verified stays verified, and the same command
// resumes. Commands that only read end at once.
constexpr auto kStopGrace = std::chrono::seconds(10);

// The status of a command that failed: as rclone splits them (the file's comment).
int failure_status(const nubo::Error& e) {
  if (e.code() == nubo::Errc::cancelled) {
    std::fprintf(stderr, "nubo-xfer: interrupted; run the same command again to resume\n");
    return kExitInterrupted;
  }
  nubo_cli::print_error("nubo-xfer", e.what());
  switch (e.code()) {
    case nubo::Errc::invalid_argument:
      return kExitUsage;
    case nubo::Errc::corrupt:
      return kExitCorrupt;
    case nubo::Errc::unavailable:
    case nubo::Errc::timeout:
      return kExitRetry;
    default:
      return kExitError;
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"nubo-xfer: compressed, resumable archives"};
  app.require_subcommand(1);
  // The subcommands, in the order --help lists them.
  const std::vector<nubo_cli::Command> commands = {
      nubo_xfer::pack_command(app),   nubo_xfer::unpack_command(app),
      nubo_xfer::list_command(app),   nubo_xfer::verify_command(app),
      nubo_xfer::cat_command(app),    nubo_xfer::keygen_command(app),
      nubo_xfer::policy_command(app), nubo_xfer::net_command(app),  // send, serve (docs/net.md)
      nubo_xfer::cp_command(app),  // to and from object storage (docs/s3.md)
      nubo_xfer::sync_command(app)};
  nubo_cli::add_version(app, "nubo-xfer");
  if (const int status = nubo_cli::parse(app, argc, argv); status >= 0) return status;
  const nubo_cli::Command* command = nubo_cli::given(commands);
  if (command == nullptr) return kExitUsage;
  nubo_cli::handle_stop_signals(kExitInterrupted, command->only_reads
                                                      ? std::chrono::milliseconds(0)
                                                      : std::chrono::milliseconds(kStopGrace));
  try {
    return command->run();
  } catch (const nubo::Error& e) {
    return failure_status(e);
  }
}
