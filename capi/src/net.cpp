// nubo_net_send and the nubo_net_server handle through the C ABI: options, the progress
// callback, the summary and the server's stats.
#include <memory>
#include <string>
#include <vector>

#include "generated/results.hpp"
#include "guard.hpp"
#include "nubo.h"
#include "nubo/net.hpp"
#include "sized_struct.hpp"
#include "transfer_convert.hpp"

struct nubo_net_server {
  std::unique_ptr<nubo::net::Server> server;
};

namespace {

namespace net = nubo::net;
namespace xfer = nubo::transfer;
using nubo::Errc;
using nubo::Error;
using nubo::capi::to_codec;

nubo_net_send_options default_send() {
  nubo_net_send_options o{};
  o.struct_size = sizeof o;
  o.codec = NUBO_CODEC_AUTO;
  o.chunk_size = xfer::kDefaultChunkSize;
  o.memory_limit = xfer::kDefaultMemory;
  o.streams = net::kDefaultStreams;
  o.timeout_seconds = net::kDefaultTimeoutSeconds;
  o.encrypt = 1;
  return o;
}

nubo_net_server_options default_server() {
  const net::ServeOptions d;
  nubo_net_server_options o{};
  o.struct_size = sizeof o;
  o.timeout_seconds = d.timeout_seconds;
  o.max_connections = d.max_connections;
  o.sync = d.sync ? 1 : 0;
  o.handshake_seconds = d.handshake_seconds;
  o.max_pending = d.max_pending;
  o.max_pending_per_address = d.max_pending_per_address;
  return o;
}

// The C callback as a SendProgressFn; the current file is copied so that it is NUL-terminated.
net::SendProgressFn wrap(nubo_net_progress_callback callback, void* user) {
  if (callback == nullptr) return {};
  return [callback, user](const net::SendProgress& p) {
    nubo::capi::Texts texts;  // the current file, NUL-terminated for the call
    const nubo_net_progress c = nubo::capi::to_nubo_net_progress(p, texts);
    return callback(&c, user) != 0;
  };
}

void write_summary(const net::SendSummary& s, nubo_net_send_summary* out) {
  if (out != nullptr)
    nubo::capi::write_sized(nubo::capi::to_nubo_net_send_summary(s), out, "summary",
                            "nubo_net_send_summary");
}

std::string text_or_empty(const char* s) {
  return s == nullptr ? std::string() : std::string(s);
}

}  // namespace

extern "C" {

NUBO_C_API nubo_status nubo_net_send_options_init(nubo_net_send_options* options,
                                                  size_t struct_size) {
  return nubo::capi::guard("nubo_net_send_options_init", [&] {
    nubo::capi::require(options, "options");
    nubo::capi::init_sized(default_send(), options, struct_size, "nubo_net_send_options");
  });
}

NUBO_C_API nubo_status nubo_net_send(const char* const* sources, size_t source_count,
                                     const char* destination, const nubo_net_send_options* options,
                                     nubo_net_send_summary* summary) {
  return nubo::capi::guard("nubo_net_send", [&] {
    nubo::capi::require(destination, "destination");
    if (source_count == 0)
      throw Error(Errc::invalid_argument, "source_count is 0: nothing to send");
    nubo::capi::require(sources, "sources");
    nubo::capi::check_out_size(summary, "summary", "nubo_net_send_summary");
    auto list = nubo::capi::to_strings(sources, source_count, "sources");
    auto o = default_send();
    if (options) {
      o = nubo::capi::read_sized(*options, o, "options", "nubo_net_send_options_init()");
    }
    net::SendOptions s;
    s.codec = to_codec(o.codec);
    s.level = o.level;
    s.chunk_size = o.chunk_size;
    s.threads = o.threads;
    s.memory_limit = o.memory_limit;
    s.streams = o.streams;
    s.rate = o.rate;
    s.token = text_or_empty(o.token);
    s.timeout_seconds = o.timeout_seconds;
    s.progress = wrap(o.progress, o.progress_user);
    s.encrypt = o.encrypt != 0;
    s.ca_file = text_or_empty(o.ca_file);
    s.server_name = text_or_empty(o.server_name);
    s.exclude = nubo::capi::to_strings(o.exclude, o.exclude_count, "options->exclude");
    s.include = nubo::capi::to_strings(o.include, o.include_count, "options->include");
    write_summary(net::send(list, destination, s), summary);
  });
}

NUBO_C_API nubo_status nubo_net_server_options_init(nubo_net_server_options* options,
                                                    size_t struct_size) {
  return nubo::capi::guard("nubo_net_server_options_init", [&] {
    nubo::capi::require(options, "options");
    nubo::capi::init_sized(default_server(), options, struct_size, "nubo_net_server_options");
  });
}

NUBO_C_API nubo_status nubo_net_server_start(const nubo_net_server_options* options,
                                             nubo_net_server** out) {
  return nubo::capi::guard("nubo_net_server_start", [&] {
    nubo::capi::require(out, "out");
    *out = nullptr;
    nubo::capi::require(options, "options");
    auto o = nubo::capi::read_sized(*options, default_server(), "options",
                                    "nubo_net_server_options_init()");
    if (o.dest == nullptr || *o.dest == '\0') {
      throw Error(Errc::invalid_argument,
                  "options->dest is not set: name the directory every write lands below");
    }
    net::ServeOptions s;
    if (o.listen != nullptr) s.listen = o.listen;
    s.dest = o.dest;
    s.token = text_or_empty(o.token);
    s.timeout_seconds = o.timeout_seconds;
    s.max_connections = o.max_connections;
    s.sync = o.sync != 0;
    s.cert_file = text_or_empty(o.cert_file);
    s.key_file = text_or_empty(o.key_file);
    s.require_encryption = o.require_encryption != 0;
    s.handshake_seconds = o.handshake_seconds;
    s.max_pending = o.max_pending;
    s.max_pending_per_address = o.max_pending_per_address;
    s.mkdir = o.mkdir != 0;
    s.preserve_special_modes = o.preserve_special_modes != 0;
    auto handle = std::make_unique<nubo_net_server>();
    handle->server = std::make_unique<net::Server>(s);
    *out = handle.release();
  });
}

NUBO_C_API uint16_t nubo_net_server_port(const nubo_net_server* server) {
  if (server == nullptr || !server->server) return 0;
  return server->server->port();
}

NUBO_C_API nubo_status nubo_net_server_stats(const nubo_net_server* server,
                                             nubo_net_server_stats_info* out) {
  return nubo::capi::guard("nubo_net_server_stats", [&] {
    nubo::capi::require(server, "server");
    nubo::capi::require(out, "out");
    nubo::capi::write_sized(nubo::capi::to_nubo_net_server_stats_info(server->server->stats()), out,
                            "out", "nubo_net_server_stats_info");
  });
}

NUBO_C_API nubo_status nubo_net_server_stop(nubo_net_server* server) {
  return nubo::capi::guard("nubo_net_server_stop", [&] {
    nubo::capi::require(server, "server");
    server->server->stop();
  });
}

NUBO_C_API void nubo_net_server_free(nubo_net_server* server) {
  // Stopping joins the server's threads; it is not expected to throw, and a free cannot report.
  static_cast<void>(nubo::capi::guard("nubo_net_server_free", [&] { delete server; }));
}

}  // extern "C"
