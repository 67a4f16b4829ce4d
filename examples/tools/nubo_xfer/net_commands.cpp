#include "net_commands.hpp"

#include <unistd.h>

#include <chrono>
#include <iostream>
#include <nlohmann/json.hpp>
#include <thread>

#include "chunks_json.hpp"
#include "cli.hpp"
#include "codec_help.hpp"
#include "nubo/cost.hpp"
#include "nubo/error.hpp"
#include "nubo/net.hpp"
#include "nubo/units.hpp"
#include "progress_bar.hpp"
#include "stop_signals.hpp"

namespace nubo_xfer {

namespace {

std::shared_ptr<NetCommands> add_net_commands(CLI::App& app) {
  auto n = std::make_shared<NetCommands>();
  n->send = app.add_subcommand("send", "send files and directories to a nubo-xfer serve");
  n->send->add_option("args", n->sources, "SRC... HOST:PORT[/SUBDIR]")->required()->expected(2, -1);
  n->send->add_option("--codec", n->codec, codec_option_help("auto", "follows the link"));
  n->send->add_option("--level", n->level, level_option_help());
  n->send->add_option("--chunk-size", n->chunk_size, "bytes per chunk, 4K to 64M (default 4M)");
  n->send->add_option("--streams", n->streams, "TCP connections in parallel (default 4)")
      ->check(nubo_cli::Range(1, 64));
  n->send->add_option("--rate", n->rate,
                      "wire bytes/s, all streams together, e.g. 100M (0: no limit)");
  n->send->add_option("--threads", n->threads, "compression threads (0: every core)")
      ->check(nubo_cli::Range(0, 1024));
  n->send->add_option("--memory", n->memory, "memory for chunks in flight (default 64M)");
  n->send->add_flag("--no-encryption", n->no_encryption,
                    "send in the clear (trusted links only; TLS 1.3 is the default)");
  n->send->add_option("--ca", n->ca_file,
                      "check the server's certificate against this CA (PEM) instead of the "
                      "token-derived key");
  n->send->add_option("--server-name", n->server_name,
                      "the name the server's certificate must carry (default: HOST)");
  n->send->add_flag("--json", n->json, "print a JSON summary on stdout");
  add_selection(n->send, n->selection);
  n->send->add_flag("--quiet,-q", n->quiet, "no progress display");
  n->serve = app.add_subcommand("serve", "receive what nubo-xfer send sends, below DEST");
  n->serve->add_option("--listen", n->listen,
                       "ADDR:PORT (default 127.0.0.1:7878; 0.0.0.0:PORT for every interface)");
  n->serve->add_option("--dest", n->dest, "the directory every write is confined to")->required();
  n->serve->add_option("--max-connections", n->max_connections, "connections at once (default 64)")
      ->check(nubo_cli::Range(1, 4096));
  n->serve->add_flag("--no-sync", n->no_sync,
                     "skip fdatasync (faster, not safe against power loss)");
  n->serve->add_flag("--mkdir", n->mkdir, "create DEST when it does not exist");
  n->serve->add_flag("--require-encryption", n->require_encryption,
                     "refuse senders that use --no-encryption");
  n->serve->add_option("--cert", n->cert_file, "TLS certificate chain (PEM), with --key");
  n->serve->add_option("--key", n->key_file, "TLS private key (PEM) of --cert");
  n->serve->add_option("--handshake-timeout", n->handshake_timeout,
                       "how long a client has to authenticate, e.g. 10s (default)");
  n->serve->add_flag("--json", n->json, "print a JSON summary of what was served at the end");
  n->serve->add_flag("--quiet,-q", n->quiet, "no start and end lines (warnings still show)");
  n->serve->add_flag("--preserve-special-modes", n->preserve_special_modes,
                     "keep setuid, setgid and sticky bits (dropped by default)");
  for (auto* c : {n->send, n->serve}) {
    c->add_option("--token-file", n->token_file,
                  "file holding the shared secret (default: NUBO_TOKEN)");
    c->add_option("--timeout", n->timeout, "how long a silent peer is given, e.g. 30s (default)");
  }
  return n;
}

// A duration with its unit ("30s", "2m", "1h"; a plain number is seconds), within (0, 1 day].
double duration(const std::string& text, const char* option) {
  const double s = nubo::parse_duration(text, option);
  if (!(s > 0 && s <= 86400))
    throw nubo::Error(nubo::Errc::invalid_argument,
                      std::string(option) + " " + text + " is out of range: use 0.1s to 1d");
  return s;
}

int run_serve(NetCommands& n) {
  nubo::net::ServeOptions o;
  o.listen = n.listen;
  o.dest = n.dest;
  if (!n.token_file.empty()) o.token = nubo::net::read_token_file(n.token_file);
  o.timeout_seconds = duration(n.timeout, "--timeout");
  o.max_connections = n.max_connections;
  o.sync = !n.no_sync;
  o.mkdir = n.mkdir;
  o.require_encryption = n.require_encryption;
  o.cert_file = n.cert_file;
  o.key_file = n.key_file;
  o.handshake_seconds = duration(n.handshake_timeout, "--handshake-timeout");
  o.preserve_special_modes = n.preserve_special_modes;
  nubo::net::Server server(o);
  if (!n.quiet && !n.json)
    std::fprintf(stderr, "nubo-xfer: serving on %s, writing below %s\n", server.address().c_str(),
                 n.dest.c_str());
  // The port on stdout, for scripts that let the system pick one (--listen 127.0.0.1:0).
  std::printf("%u\n", static_cast<unsigned>(server.port()));
  std::fflush(stdout);
  while (!nubo_cli::stop_requested) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  server.stop();
  auto s = server.stats();
  if (n.json) {
    std::cout << nlohmann::json{{"operation", "served"},
                                {"address", server.address()},
                                {"connections", s.connections},
                                {"refused", s.refused},
                                {"sessions", s.sessions},
                                {"files", s.files},
                                {"bytes", s.bytes}}
                     .dump(2)
              << "\n";
    return 0;
  }
  if (n.quiet) return 0;
  std::fprintf(stderr, "nubo-xfer: served %s, %s, %s; refused %s\n",
               nubo_cli::count_of(s.sessions, "send").c_str(),
               nubo_cli::count_of(s.files, "file").c_str(),
               nubo::format_bytes(static_cast<double>(s.bytes), 2).c_str(),
               nubo_cli::count_of(s.refused, "connection").c_str());
  return 0;
}

int run_send(NetCommands& n) {
  auto destination = n.sources.back();
  n.sources.pop_back();
  if (n.selection.dry_run) return dry_run(n.sources, n.selection, "send", n.json);
  nubo::net::SendOptions o;
  o.codec = nubo::transfer::parse_codec(n.codec);
  o.level = n.level;
  o.chunk_size = nubo::parse_bytes(n.chunk_size, "--chunk-size");
  o.rate = nubo::parse_rate(n.rate, "--rate");
  o.memory_limit = nubo::parse_bytes(n.memory, "--memory");
  o.threads = n.threads;
  o.streams = n.streams;
  o.timeout_seconds = duration(n.timeout, "--timeout");
  o.encrypt = !n.no_encryption;
  o.ca_file = n.ca_file;
  o.server_name = n.server_name;
  o.exclude = n.selection.exclude;
  o.include = n.selection.include;
  if (!n.token_file.empty()) o.token = nubo::net::read_token_file(n.token_file);
  ProgressBar bar("sent", n.quiet);
  o.progress = [&](const nubo::net::SendProgress& p) { return bar(p); };
  nubo::net::SendSummary s;
  try {
    s = nubo::net::send(n.sources, destination, o);
  } catch (...) {
    bar.finish();
    throw;
  }
  bar.finish();
  if (n.json) {
    nlohmann::json j = {{"operation", "sent"},
                        {"files", s.files},
                        {"directories", s.directories},
                        {"symlinks", s.symlinks},
                        {"bytes", s.bytes},
                        {"bytes_sent", s.bytes_sent},
                        {"bytes_skipped", s.bytes_skipped},
                        {"bytes_resumed", s.bytes_resumed},
                        {"bytes_deduplicated", s.bytes_deduplicated},
                        {"wire_bytes", s.wire_bytes},
                        {"chunks", chunks_json("sent", s.chunks_sent, s.chunks_by_codec)},
                        {"streams", s.streams},
                        {"seconds", s.seconds}};
    std::cout << j.dump(2) << "\n";
  } else if (!n.quiet) {
    std::fprintf(
        stderr,
        "nubo-xfer: sent %s in %.2f s: %s sent (%s copied from identical files, %s on "
        "the wire, %s/s), %s skipped (already there), %s resumed\n",
        nubo_cli::count_of(s.files, "file").c_str(), s.seconds,
        nubo::format_bytes(static_cast<double>(s.bytes_sent), 2).c_str(),
        nubo::format_bytes(static_cast<double>(s.bytes_deduplicated), 2).c_str(),
        nubo::format_bytes(static_cast<double>(s.wire_bytes), 2).c_str(),
        nubo::format_bytes(s.seconds > 0 ? static_cast<double>(s.wire_bytes) / s.seconds : 0, 2)
            .c_str(),
        nubo::format_bytes(static_cast<double>(s.bytes_skipped), 2).c_str(),
        nubo::format_bytes(static_cast<double>(s.bytes_resumed), 2).c_str());
  }
  return 0;
}

}  // namespace

nubo_cli::Command net_command(CLI::App& app) {
  auto n = add_net_commands(app);
  return {[n] { return n->parsed(); },
          [n] { return n->serve->parsed() ? run_serve(*n) : run_send(*n); }};
}

}  // namespace nubo_xfer
