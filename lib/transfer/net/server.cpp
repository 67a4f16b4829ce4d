// nubo::net::Server: an accept loop and a thread per connection, at most max_connections at
// once. Each connection authenticates first (auth.hpp), admitted until then by admission.hpp;
// a control connection then runs a send's Session, and data connections join it by its id.
// Whatever one connection does wrong (a wrong token, garbage, a huge length, silence) ends that
// connection and nothing else: the others go on. Its reason is logged, or, before it
// authenticated, counted into one line per period (drop_report.hpp).
#include <sys/socket.h>
#include <sys/stat.h>

#include <atomic>
#include <condition_variable>
#include <list>
#include <map>
#include <optional>
#include <set>
#include <thread>

#include "common/env.hpp"
#include "common/log.hpp"
#include "common/tls.hpp"
#include "nubo/error.hpp"
#include "nubo/net.hpp"
#include "transfer/codec/codec.hpp"
#include "transfer/net/admission.hpp"
#include "transfer/net/auth.hpp"
#include "transfer/net/drop_report.hpp"
#include "transfer/net/session.hpp"
#include "transfer/net/socket.hpp"
#include "transfer/net/token.hpp"

namespace nubo::net {

using namespace nubo::transfer;
using namespace nubo::transfer::net;

// Refusals linger (refuse() in auth.hpp) on threads of their own, at most this many at once;
// beyond it a refused connection is closed after its message without lingering.
constexpr int kMaxLingering = 16;

// The address of a peer "ADDR:PORT" or "[V6]:PORT", without the port.
std::string address_of(const std::string& peer) {
  auto colon = peer.rfind(':');
  return colon == std::string::npos ? peer : peer.substr(0, colon);
}

struct Server::Impl {
  ServeOptions options;
  std::string token;
  std::shared_ptr<tls::Context> tls;
  std::unique_ptr<Listener> listener;
  std::thread acceptor;
  std::atomic<bool> stopping{false};
  // Refusals lingering on threads of their own (refuse_later): stop() ends them and waits.
  std::mutex linger_mutex;
  std::condition_variable linger_done;
  std::set<int> linger_fds;
  int lingering = 0;

  std::mutex mutex;
  struct Conn {
    std::thread thread;
    int fd = -1;
    bool finished = false;
    bool authenticated = false;
    bool evicted = false;              // dropped for a newcomer: its thread is on its way out
    std::string address;               // the peer's, for the per-address budget
    std::optional<SessionId> session;  // the send it serves, once authenticated
  };
  std::map<std::uint64_t, Conn> conns;  // by id, in the order accepted
  std::uint64_t next_conn = 0;
  struct Send {
    std::shared_ptr<Session> session;
    std::string address;  // the sender's
  };
  std::map<SessionId, Send> sessions;
  ServerStats stats;
  // Connections not yet authenticated (admission.hpp), and what was dropped of them (logged a
  // line per period, not per drop). Under the mutex.
  std::optional<Admission> admission;
  DropReport drops;

  void accept_loop();
  // Admits a new connection, or refuses it with a reason; evicts what the admission says.
  void admit(Socket s);
  void serve(std::uint64_t id, Socket s);
  // Counts an authenticated connection; false when max_connections are in use.
  bool admit_authenticated(std::uint64_t id);
  // Logs the dropped connections' line when its period is over (or now, when `final`).
  void report_drops(bool final);
  void refuse_later(Socket s, Errc code, const std::string& text);
  void run_control(Socket& s, const std::shared_ptr<Session>& session);
  void run_data(Socket& s, const std::shared_ptr<Session>& session);
  void reap();
  // A new send of the same files (`job`) from `address` finds the journal held by another of
  // this server's sessions: one from the same address is a rerun after a cut link, and takes
  // over (the old one's connections are closed); one from elsewhere is waited for, and the new
  // sender is told for how long.
  void journal_held(std::uint64_t job, const std::string& address, const SessionId& self);
};

void Server::Impl::journal_held(std::uint64_t job, const std::string& address,
                                const SessionId& self) {
  std::lock_guard lock(mutex);
  for (const auto& [id, send] : sessions) {
    if (id == self || send.session->job() != job) continue;
    if (send.address != address) {
      const auto idle = std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                                      send.session->last_activity())
                            .count();
      const int wait = static_cast<int>(std::max(options.timeout_seconds - idle, 1.0) + 0.5);
      throw Error(Errc::unavailable, "the same files are being sent to this destination from " +
                                         send.address + "; that send is given up after " +
                                         std::to_string(static_cast<int>(options.timeout_seconds)) +
                                         " s of silence: wait about " + std::to_string(wait) +
                                         " s and run it again");
    }
    log::info("a new send of the same files from " + address +
              " takes over from the interrupted one");
    for (const auto& [_, c] : conns)
      if (c.session == id && c.fd >= 0) ::shutdown(c.fd, SHUT_RDWR);
  }
}

void Server::Impl::refuse_later(Socket s, Errc code, const std::string& text) {
  {
    std::lock_guard lock(linger_mutex);
    if (stopping || lingering >= kMaxLingering) {
      send_error(s, code, text);
      return;
    }
    ++lingering;
    linger_fds.insert(s.fd());
  }
  std::thread([this, sock = std::move(s), code, text]() mutable {
    refuse(sock, code, text);
    // Forgotten before it is closed, so that stop() never shuts down a reused descriptor.
    std::lock_guard lock(linger_mutex);
    linger_fds.erase(sock.fd());
    sock.close();
    --lingering;
    linger_done.notify_all();
  }).detach();
}

bool Server::Impl::admit_authenticated(std::uint64_t id) {
  std::lock_guard lock(mutex);
  admission->leave(id);
  int in_use = 0;
  for (const auto& [_, c] : conns) in_use += c.authenticated && !c.finished;
  if (in_use >= options.max_connections) return false;
  conns[id].authenticated = true;
  return true;
}

void Server::Impl::report_drops(bool final) {
  std::optional<std::string> line;
  {
    std::lock_guard lock(mutex);
    line = drops.due(std::chrono::steady_clock::now(), final);
  }
  if (line) log::warn(*line);
}

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
    report_drops(false);
    if (s) admit(std::move(s));
  }
}

void Server::Impl::admit(Socket s) {
  std::unique_lock lock(mutex);
  ++stats.connections;
  const std::string address = address_of(s.peer());
  const auto id = next_conn++;
  const auto d = admission->arrive(id, s.fd(), address, std::chrono::steady_clock::now());
  for (auto victim : d.evicted) {
    auto it = conns.find(victim);
    if (it == conns.end()) continue;
    if (it->second.fd >= 0) ::shutdown(it->second.fd, SHUT_RDWR);
    it->second.evicted = true;
    ++stats.refused;
    drops.note("idle (nothing sent), evicted for newcomers", it->second.address);
  }
  if (d.refusal != Admission::Refusal::none) {
    ++stats.refused;
    std::string why, text;
    switch (d.refusal) {
      case Admission::Refusal::rate:
        why = "refused: their address lost too many connections before authenticating";
        text =
            "server busy: too many connections from your address came to nothing (idle, or "
            "a failed handshake); try again in a few seconds";
        break;
      case Admission::Refusal::address:
        why = "over " + std::to_string(options.max_pending_per_address) +
              " connections authenticating per address";
        text =
            "server busy: too many connections from your address are still "
            "authenticating; try again later";
        break;
      default:
        why = "refused: every slot for connections authenticating held by handshakes";
        text =
            "server busy: every slot for connections not yet authenticated is taken by "
            "handshakes in progress; try again in a few seconds";
    }
    drops.note(why, address);
    lock.unlock();
    // From an address that keeps losing connections, a refusal costs no thread: its message,
    // and the connection is closed.
    if (d.refusal == Admission::Refusal::rate)
      send_error(s, Errc::unavailable, text);
    else
      refuse_later(std::move(s), Errc::unavailable, text);
    return;
  }
  auto& c = conns[id];
  c.fd = s.fd();
  c.address = address;
  c.thread = std::thread([this, id, sock = std::move(s)]() mutable { serve(id, std::move(sock)); });
}

void Server::Impl::serve(std::uint64_t id, Socket s) {
  std::string peer = s.peer();
  std::shared_ptr<Session> session;
  SessionId session_id{};
  bool control = false;
  bool authenticated = false;
  try {
    // The handshake, TLS and the token, within its deadline however the client paces it.
    s.set_deadline(std::chrono::steady_clock::now() +
                   std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                       std::chrono::duration<double>(options.handshake_seconds)));
    const bool encrypted = std::to_integer<unsigned char>(s.peek_byte()) == tls::kHandshakeRecord;
    if (encrypted) {
      s.start_tls(*tls);
      std::lock_guard lock(mutex);
      admission->handshaken(id);
    } else if (options.require_encryption) {
      throw Error(Errc::invalid_argument,
                  "this server accepts only encrypted connections (TLS): send without "
                  "--no-encryption");
    }
    auto a = server_handshake(s, token);
    authenticated = true;
    if (!encrypted)
      log::warn("connection from " + peer +
                " is not encrypted (--no-encryption): what it sends can be read and altered "
                "on the way");
    if (!admit_authenticated(id)) {
      log::warn("refused connection from " + peer + ": " + std::to_string(options.max_connections) +
                " connections already");
      throw Error(Errc::unavailable, "server busy: " + std::to_string(options.max_connections) +
                                         " connections already; try again later");
    }
    s.set_deadline(std::nullopt);
    control = a.hello.role == Role::control;
    if (control) {
      random_bytes(session_id);
      SessionConfig config;
      config.dest = options.dest;
      config.sync = options.sync;
      config.timeout_seconds = options.timeout_seconds;
      config.keep_special_modes = options.preserve_special_modes;
      const std::string address = address_of(peer);
      config.journal_held = [this, address, session_id](std::uint64_t job) {
        journal_held(job, address, session_id);
      };
      session = std::make_shared<Session>(std::move(config));
      std::lock_guard lock(mutex);
      sessions[session_id] = {session, address};
      conns[id].session = session_id;
    } else {
      std::lock_guard lock(mutex);
      auto it = sessions.find(a.hello.session);
      if (it != sessions.end()) session = it->second.session;
      session_id = a.hello.session;
      if (session) conns[id].session = session_id;
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
    bool evicted = false;
    if (!quiet) {
      std::lock_guard lock(mutex);
      if (auto it = conns.find(id); it != conns.end()) evicted = it->second.evicted;
      if (evicted) {
        // Counted and reported when it was evicted.
      } else if (!authenticated) {
        ++stats.refused;
        admission->dropped(address_of(peer), std::chrono::steady_clock::now());
        drops.note("ended before authenticating", address_of(peer), peer + ": " + e.what());
      } else {
        ++stats.refused;
        log::warn("connection from " + peer + " closed: " + e.what());
      }
    }
    // Tell the peer why (a full disk, a busy destination, a refused entry): the sender shows
    // the receiver's reason rather than a reset. A peer that went silent is not written to; on
    // a connection that broke the write fails quietly.
    // The receiver's own failure on a data stream ends the send: its control stream says why.
    if (session && !control && e.code() == Errc::io) session->fail(e.what());
    // The peer's bytes may still be unread (before authentication, or a sender streaming
    // chunks): a lingering close lets the reason arrive instead of a reset.
    if (e.code() != Errc::timeout && !evicted) refuse(s, e.code(), e.what());
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
    admission->leave(id);
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
      if (auto why = session->failure()) throw Error(Errc::io, *why);
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
  if (!(options.handshake_seconds > 0 && options.handshake_seconds <= 3600))
    throw Error(Errc::invalid_argument, "handshake_seconds must be in (0, 3600]");
  if (options.max_pending < 1 || options.max_pending_per_address < 1)
    throw Error(Errc::invalid_argument, "max_pending and max_pending_per_address must be >= 1");
  i.admission.emplace(
      Admission::Limits{.max_pending = options.max_pending,
                        .max_pending_per_address = options.max_pending_per_address});
  i.token = resolve_token(options.token);
  tls::Options t;
  t.token = i.token;
  t.cert_file = options.cert_file;
  t.key_file = options.key_file;
  i.tls = tls::Context::server(t);
  struct stat st {};
  if (::stat(options.dest.c_str(), &st) != 0) {
    if (!options.mkdir)
      throw Error(Errc::not_found, "the destination " + options.dest +
                                       " does not exist: create it, or pass --mkdir");
  } else if (!S_ISDIR(st.st_mode)) {
    throw Error(Errc::invalid_argument, "the destination " + options.dest + " is not a directory");
  }
  TargetDir check(options.dest);  // creates DEST (with mkdir), and fails early if it cannot
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
  i.listener->close();  // "stopped" means refused, not accepted into a backlog nobody reads
  {
    // The lingering refusals end now, and are waited for: their threads use this server.
    std::unique_lock lock(i.linger_mutex);
    for (int fd : i.linger_fds) ::shutdown(fd, SHUT_RDWR);
    i.linger_done.wait(lock, [&i] { return i.lingering == 0; });
  }
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
  i.report_drops(true);
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
