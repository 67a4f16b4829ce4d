// nubo::net::Server: an accept loop and a thread per connection, at most max_connections at
// once. Each connection authenticates first (auth.hpp); a control connection then runs a send's
// Session, and data connections join it by its id. Whatever one connection does wrong (a wrong
// token, garbage, a huge length, silence) ends that connection with a logged reason and nothing
// else: the others go on.
#include <sys/socket.h>

#include <atomic>
#include <list>
#include <map>
#include <thread>

#include "common/env.hpp"
#include "common/log.hpp"
#include "nubo/error.hpp"
#include "nubo/net.hpp"
#include "transfer/codec.hpp"
#include "transfer/net/auth.hpp"
#include "transfer/net/session.hpp"
#include "transfer/net/socket.hpp"
#include "transfer/net/token.hpp"

namespace nubo::net {

using namespace nubo::transfer;
using namespace nubo::transfer::net;

struct Server::Impl {
  ServeOptions options;
  std::string token;
  std::unique_ptr<Listener> listener;
  std::thread acceptor;
  std::atomic<bool> stopping{false};

  std::mutex mutex;
  struct Conn {
    std::thread thread;
    int fd = -1;
    bool finished = false;
  };
  std::map<std::uint64_t, Conn> conns;
  std::uint64_t next_conn = 0;
  std::map<SessionId, std::shared_ptr<Session>> sessions;
  ServerStats stats;

  void accept_loop();
  void serve(std::uint64_t id, Socket s);
  void run_control(Socket& s, const std::shared_ptr<Session>& session);
  void run_data(Socket& s, const std::shared_ptr<Session>& session);
  void reap();
};

void Server::Impl::reap() {
  std::list<std::thread> done;
  {
    std::lock_guard lock(mutex);
    for (auto it = conns.begin(); it != conns.end();) {
      if (it->second.finished) {
        done.push_back(std::move(it->second.thread));
        it = conns.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (auto& t : done) t.join();
}

void Server::Impl::accept_loop() {
  while (!stopping) {
    Socket s = listener->accept(500, options.timeout_seconds);
    reap();
    if (!s) continue;
    std::lock_guard lock(mutex);
    ++stats.connections;
    if (conns.size() >= static_cast<std::size_t>(options.max_connections)) {
      ++stats.refused;
      log::warn("refused connection from " + s.peer() + ": " +
                std::to_string(options.max_connections) + " connections already");
      send_error(s, Errc::unavailable, "server busy: too many connections; try again later");
      continue;
    }
    auto id = next_conn++;
    auto& c = conns[id];
    c.fd = s.fd();
    c.thread =
        std::thread([this, id, sock = std::move(s)]() mutable { serve(id, std::move(sock)); });
  }
}

void Server::Impl::serve(std::uint64_t id, Socket s) {
  std::string peer = s.peer();
  std::shared_ptr<Session> session;
  SessionId session_id{};
  bool control = false;
  try {
    auto a = server_handshake(s, token);
    control = a.hello.role == Role::control;
    if (control) {
      random_bytes(session_id);
      session = std::make_shared<Session>(options.dest, options.sync, options.timeout_seconds);
      std::lock_guard lock(mutex);
      sessions[session_id] = session;
    } else {
      std::lock_guard lock(mutex);
      auto it = sessions.find(a.hello.session);
      if (it != sessions.end()) session = it->second;
      session_id = a.hello.session;
    }
    if (!session) {
      send_error(s, Errc::not_found, "no such session (it ended)");
      throw Error(Errc::not_found, "a data stream for a session that does not exist");
    }
    server_welcome(s, token, a, session_id);
    if (control) {
      run_control(s, session);
    } else {
      run_data(s, session);
    }
  } catch (const Error& e) {
    bool quiet = stopping || (e.code() == Errc::unavailable && !control && session);
    if (!quiet) {
      log::warn("connection from " + peer + " closed: " + e.what());
      std::lock_guard lock(mutex);
      ++stats.refused;
    }
    // Tell the peer why, unless the connection itself is what failed.
    if (e.code() == Errc::corrupt || e.code() == Errc::not_found) send_error(s, e.code(), e.what());
  } catch (const std::exception& e) {
    log::error("connection from " + peer + ": " + e.what());
  }
  if (control && session) {
    session->close();
    std::lock_guard lock(mutex);
    sessions.erase(session_id);
  }
  {
    // Forgotten before it is closed, so that stop() never shuts down a reused descriptor.
    std::lock_guard lock(mutex);
    auto it = conns.find(id);
    if (it != conns.end()) {
      it->second.fd = -1;
      it->second.finished = true;
    }
  }
  s.close();
}

void Server::Impl::run_control(Socket& s, const std::shared_ptr<Session>& session) {
  Socket::Message m;
  for (;;) {
    // While data flows on the other streams the control stream may be silent for long.
    while (!s.readable(200)) {
      if (stopping) throw Error(Errc::cancelled, "server stopping");
      auto idle = std::chrono::steady_clock::now() - session->last_activity();
      if (idle > std::chrono::duration<double>(options.timeout_seconds))
        throw Error(Errc::timeout, "peer stalled: nothing for " +
                                       std::to_string(static_cast<int>(options.timeout_seconds)) +
                                       " s");
    }
    s.read_message_into(m, kMaxControl);
    switch (m.type) {
      case MsgType::begin:
        session->begin(decode_begin(m.payload));
        break;
      case MsgType::entries:
        session->add_entries(decode_entries(m.payload));
        break;
      case MsgType::entries_end: {
        if (!m.payload.empty()) throw Error(Errc::corrupt, "entries_end with a payload");
        for (const auto& batch : encode_status(session->plan()))
          s.write_message(MsgType::status, batch);
        s.write_message(MsgType::status_end, {});
        break;
      }
      case MsgType::finish: {
        auto r = session->finish();
        s.write_message(MsgType::result, encode_result(r));
        std::lock_guard lock(mutex);
        ++stats.sessions;
        stats.files += r.files;
        stats.bytes += r.bytes;
        return;
      }
      default:
        throw Error(Errc::corrupt,
                    std::string("unexpected ") + msg_name(m.type) + " message on a control stream");
    }
  }
}

void Server::Impl::run_data(Socket& s, const std::shared_ptr<Session>& session) {
  if (!session->planned()) throw Error(Errc::corrupt, "a data stream before the plan");
  Socket::Message m;
  StreamState stream;
  BundleMeta bundle;
  std::uint64_t count = 0;
  for (;;) {
    if (stopping) throw Error(Errc::cancelled, "server stopping");
    s.read_message_into(m, kMaxControl + session->chunk_size(), session->chunk_size());
    switch (m.type) {
      case MsgType::chunk: {
        if (m.payload.size() < kChunkMetaSize)
          throw Error(Errc::corrupt, "chunk message: truncated");
        auto meta = decode_chunk_meta({m.payload.data(), kChunkMetaSize}, session->chunk_size());
        Bytes payload{m.payload.data() + kChunkMetaSize, m.payload.size() - kChunkMetaSize};
        if (payload.size() != meta.stored_size)
          throw Error(Errc::corrupt, "chunk message: payload of " + std::to_string(payload.size()) +
                                         " bytes, its header says " +
                                         std::to_string(meta.stored_size));
        session->chunk(meta, payload, stream);
        ++count;
        break;
      }
      case MsgType::bundle: {
        auto payload = decode_bundle(m.payload, session->chunk_size(), bundle);
        session->bundle(bundle, payload, stream);
        ++count;
        break;
      }
      case MsgType::file_end:
        session->file_end(decode_file_end(m.payload));
        break;
      case MsgType::stream_end:
        decode_u64(m.payload, "stream_end message");
        s.write_message(MsgType::stream_done, encode_u64(count));
        return;
      default:
        throw Error(Errc::corrupt,
                    std::string("unexpected ") + msg_name(m.type) + " message on a data stream");
    }
  }
}

Server::Server(const ServeOptions& options) : impl_(std::make_unique<Impl>()) {
  auto& i = *impl_;
  i.options = options;
  if (options.dest.empty()) throw Error(Errc::invalid_argument, "no destination directory given");
  if (options.max_connections < 1 || options.max_connections > 4096)
    throw Error(Errc::invalid_argument, "max_connections must be 1 to 4096");
  i.token = resolve_token(options.token);
  TargetDir check(options.dest);  // creates DEST, and fails early if it cannot
  i.listener = std::make_unique<Listener>(parse_endpoint(options.listen, false), 128);
  log::info("nubo-xfer serve: listening on " + address() + ", writing below " + options.dest);
  i.acceptor = std::thread([&i] { i.accept_loop(); });
}

Server::~Server() {
  stop();
}

void Server::stop() {
  auto& i = *impl_;
  if (i.stopping.exchange(true)) return;
  i.listener->stop();
  if (i.acceptor.joinable()) i.acceptor.join();
  {
    std::lock_guard lock(i.mutex);
    for (auto& [_, c] : i.conns)
      if (c.fd >= 0) ::shutdown(c.fd, SHUT_RDWR);
  }
  std::map<std::uint64_t, Impl::Conn> conns;
  {
    std::lock_guard lock(i.mutex);
    conns.swap(i.conns);
  }
  for (auto& [_, c] : conns)
    if (c.thread.joinable()) c.thread.join();
}

std::uint16_t Server::port() const {
  return impl_->listener->port();
}

std::string Server::address() const {
  return impl_->listener->host() + ":" + std::to_string(port());
}

ServerStats Server::stats() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->stats;
}

}  // namespace nubo::net
