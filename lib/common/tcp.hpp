// TCP with deadlines, for every part of nubo that talks over a network (transfer's send/serve,
// the tcp:// rendezvous store): every read and write waits at most the idle timeout for
// progress, so a peer that stalls is given up with Error(timeout) instead of holding a thread
// forever. Sockets are non-blocking underneath; poll() does the waiting. shutdown() from
// another thread wakes a waiting call, which is how a server stops and a cancelled send ends
// its streams. Protocols (framing, authentication) live with their users.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>

typedef struct ssl_st SSL;

namespace nubo::tls {
class Context;
}

namespace nubo::tcp {

struct HostPort {
  std::string host;  // a name or an address, without IPv6 brackets; empty: any (listening)
  std::uint16_t port = 0;
};

// "HOST:PORT" or "[V6]:PORT"; Error(invalid_argument) naming `text` and what is wrong, with
// `expected` (e.g. "ADDR:PORT") as the hint.
HostPort parse_host_port(const std::string& text, const std::string& expected = "HOST:PORT");

class Socket {
 public:
  Socket() = default;
  Socket(int fd, std::string peer, double timeout_seconds);
  Socket(Socket&& o) noexcept
      : fd_(std::exchange(o.fd_, -1)),
        ssl_(std::exchange(o.ssl_, nullptr)),
        peer_(std::move(o.peer_)),
        timeout_ms_(o.timeout_ms_),
        deadline_(o.deadline_) {}
  Socket& operator=(Socket&& o) noexcept;
  ~Socket();
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;

  // Error(unavailable) naming the address and the last reason when no address answers.
  static Socket connect(const HostPort& to, double timeout_seconds);

  int fd() const { return fd_; }
  const std::string& peer() const { return peer_; }
  explicit operator bool() const { return fd_ >= 0; }
  void set_timeout(double seconds);
  // Every read and write fails with Error(timeout) after `at`, whatever progress the peer
  // makes (a handshake deadline: a peer dripping a byte at a time resets the idle timeout, not
  // this); nullopt removes it.
  void set_deadline(std::optional<std::chrono::steady_clock::time_point> at) { deadline_ = at; }

  // TLS 1.3 over this connection (common/tls.hpp): the handshake as a client (`host`: the name
  // a certificate must carry) or a server, within the timeout and deadline. When it fails:
  // Error(invalid_argument) when a key derived from the token did not verify (another token,
  // or the handshake altered on the way), else Error(unavailable) naming the peer and OpenSSL's
  // reason (a certificate that does not verify, a record that does not authenticate).
  // Afterwards every read and write goes through it.
  void start_tls(const tls::Context& context, const std::string& host = "");
  bool encrypted() const { return ssl_ != nullptr; }
  // The first byte the peer sent, without consuming it (waits for it within the timeout and
  // deadline); Error(unavailable) when the peer closes first.
  std::byte peek_byte();

  // Exactly out.size() bytes; Error(unavailable) when the peer closes, Error(timeout) when no
  // byte arrives for the timeout.
  void read_exact(std::span<std::byte> out);
  void write_all(std::span<const std::byte> data);
  // Whether a byte can be read within `ms` (a peer that closed counts as readable; bytes TLS
  // already decrypted count too).
  bool readable(int ms) const;
  // Wakes any call waiting on this socket from another thread; the socket stays open.
  void shutdown() const;
  void close();

 protected:
  int timeout_ms() const { return timeout_ms_; }

 private:
  void wait(short events);
  // An OpenSSL call's outcome: true when it should be retried after waiting; throws on failure.
  bool tls_retry(int rc, const char* what);
  int fd_ = -1;
  SSL* ssl_ = nullptr;
  bool handshake_psk_ = false;  // a PSK handshake is under way (its failures mean another token)
  std::string peer_;
  int timeout_ms_ = 30000;
  std::optional<std::chrono::steady_clock::time_point> deadline_;
};

class Listener {
 public:
  // Binds and listens; Error(unavailable) naming the address and the reason (in use...).
  Listener(const HostPort& at, int backlog);
  ~Listener();
  Listener(const Listener&) = delete;
  Listener& operator=(const Listener&) = delete;
  std::uint16_t port() const { return port_; }
  const std::string& host() const { return host_; }
  // A connection, or an empty Socket when stop() was called or `wait_ms` passed.
  Socket accept(int wait_ms, double timeout_seconds);
  // Wakes a thread blocked in accept(), which then returns an empty Socket.
  void stop();
  // Closes the listening socket: new connections are refused (and ones waiting in the backlog
  // reset) instead of stalling until their timeout. Only once no thread is in accept().
  void close();

 private:
  int fd_ = -1;
  int wake_[2] = {-1, -1};
  std::string host_;
  std::uint16_t port_ = 0;
};

}  // namespace nubo::tcp
