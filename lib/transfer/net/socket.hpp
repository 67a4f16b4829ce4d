// TCP sockets with deadlines: every read and write waits at most the idle timeout for progress,
// so a peer that stalls is given up with Error(timeout) instead of holding a thread forever.
// Sockets are non-blocking underneath; poll() does the waiting. shutdown() from another thread
// wakes a waiting call, which is how a server stops and a cancelled send ends its streams.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "transfer/bytes.hpp"
#include "transfer/net/wire.hpp"

namespace nubo::transfer::net {

struct Endpoint {
  std::string host;  // a name or an address, without IPv6 brackets
  std::uint16_t port = 0;
  std::string subdir;  // send only: the part after "HOST:PORT/"
};
// "HOST:PORT", "[V6]:PORT", optionally followed by "/SUBDIR" when `allow_subdir`.
Endpoint parse_endpoint(const std::string& text, bool allow_subdir);

class Socket {
 public:
  Socket() = default;
  Socket(int fd, std::string peer, double timeout_seconds);
  Socket(Socket&& o) noexcept
      : fd_(std::exchange(o.fd_, -1)), peer_(std::move(o.peer_)), timeout_ms_(o.timeout_ms_) {}
  Socket& operator=(Socket&& o) noexcept;
  ~Socket();
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;

  static Socket connect(const Endpoint& to, double timeout_seconds);

  int fd() const { return fd_; }
  const std::string& peer() const { return peer_; }
  explicit operator bool() const { return fd_ >= 0; }
  void set_timeout(double seconds);

  // Exactly out.size() bytes; Error(unavailable) when the peer closes, Error(timeout) when no
  // byte arrives for the timeout.
  void read_exact(MutableBytes out);
  void write_all(Bytes data);
  // Wakes any call waiting on this socket from another thread; the socket stays open.
  void shutdown() const;
  void close();

  // One framed message: the header is checked against `max_length` before anything else is
  // read, so a huge length costs nothing.
  struct Message {
    MsgType type = MsgType::error;
    std::vector<std::byte> payload;
  };
  // `chunk_size` bounds chunk messages (0: none expected); other types have their own limits.
  Message read_message(std::uint32_t max_length, std::uint32_t chunk_size = 0);
  void read_message_into(Message& m, std::uint32_t max_length, std::uint32_t chunk_size = 0);
  // Whether a byte can be read within `ms` (a peer that closed counts as readable).
  bool readable(int ms) const;
  void write_message(MsgType type, Bytes payload);

 private:
  void wait(short events);
  int fd_ = -1;
  std::string peer_;
  int timeout_ms_ = 30000;
};

class Listener {
 public:
  Listener(const Endpoint& at, int backlog);
  ~Listener();
  Listener(const Listener&) = delete;
  Listener& operator=(const Listener&) = delete;
  std::uint16_t port() const { return port_; }
  const std::string& host() const { return host_; }
  // A connection, or nullopt-like empty Socket when stop() was called or `wait_ms` passed.
  Socket accept(int wait_ms, double timeout_seconds);
  void stop();

 private:
  int fd_ = -1;
  int wake_[2] = {-1, -1};
  std::string host_;
  std::uint16_t port_ = 0;
};

}  // namespace nubo::transfer::net
