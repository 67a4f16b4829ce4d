// An on-path attacker for the network tests: a TCP proxy between a sender and a server that
// records every byte, and can alter a byte, cut the connection after some bytes, or go silent
// (a link that died without either end seeing a close). It can also connect upstream from
// another loopback address (127.0.0.X), so that the server sees another machine.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace nubo_test {

// A TCP socket connected to 127.0.0.1:`port` from `source` (an address of 127.0.0.0/8).
inline int connect_from(const std::string& source, std::uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::runtime_error("socket failed");
  sockaddr_in a{};
  a.sin_family = AF_INET;
  ::inet_pton(AF_INET, source.c_str(), &a.sin_addr);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(port);
  ::inet_pton(AF_INET, "127.0.0.1", &to.sin_addr);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      ::connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to) != 0) {
    ::close(fd);
    throw std::runtime_error("cannot connect from " + source);
  }
  return fd;
}

class Proxy {
 public:
  struct Attack {
    std::string source = "127.0.0.1";  // the address the server sees
    // Client-to-server offset (over all connections together) whose byte is flipped; -1: none.
    std::int64_t flip_at = -1;
    // Client-to-server bytes after which every connection is cut; -1: never.
    std::int64_t cut_after = -1;
    // Client-to-server bytes after which nothing more is forwarded either way, the sockets
    // left open; -1: never.
    std::int64_t freeze_after = -1;
  };

  Proxy(std::uint16_t server_port, Attack attack) : server_port_(server_port), attack_(attack) {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    ::inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    socklen_t len = sizeof a;
    if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
        ::listen(listen_fd_, 64) != 0 ||
        ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&a), &len) != 0)
      throw std::runtime_error("proxy: cannot listen");
    port_ = ntohs(a.sin_port);
    acceptor_ = std::thread([this] { accept_loop(); });
  }
  ~Proxy() { stop(); }
  Proxy(const Proxy&) = delete;
  Proxy& operator=(const Proxy&) = delete;

  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  // Everything the sender sent, as the wire carried it (before any alteration).
  std::string captured() {
    std::lock_guard lock(mutex_);
    return captured_;
  }
  // What the sender sent on each connection, in the order they were accepted.
  std::vector<std::string> connections() {
    std::lock_guard lock(mutex_);
    return connections_;
  }
  bool frozen() const { return frozen_; }
  // Closes every connection (a frozen link stays open until then).
  void stop() {
    if (stopping_.exchange(true)) return;
    ::shutdown(listen_fd_, SHUT_RDWR);
    if (acceptor_.joinable()) acceptor_.join();
    for (auto& t : pipes_) t.join();
    ::close(listen_fd_);
  }

 private:
  void accept_loop() {
    for (;;) {
      pollfd p{listen_fd_, POLLIN, 0};
      if (stopping_) return;
      if (::poll(&p, 1, 50) <= 0) continue;
      int client = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (client < 0) continue;
      int server = -1;
      try {
        server = connect_from(attack_.source, server_port_);
      } catch (const std::exception&) {
        ::close(client);
        continue;
      }
      std::size_t index;
      {
        std::lock_guard lock(mutex_);
        index = connections_.size();
        connections_.emplace_back();
      }
      pipes_.emplace_back([this, client, server, index] { pipe(client, server, index); });
    }
  }

  // Forwards both ways until either side closes, the attack cuts the link, or the proxy stops.
  void pipe(int client, int server, std::size_t index) {
    std::vector<char> buf(64 * 1024);
    bool open = true;
    while (open && !stopping_) {
      pollfd p[2] = {{client, POLLIN, 0}, {server, POLLIN, 0}};
      if (::poll(p, 2, 50) <= 0 || frozen_) continue;
      for (int side = 0; side < 2 && open; ++side) {
        if (!(p[side].revents & (POLLIN | POLLHUP | POLLERR))) continue;
        auto n = ::recv(p[side].fd, buf.data(), buf.size(), 0);
        if (n <= 0) {
          open = false;
          break;
        }
        if (side == 0) n = tamper(buf.data(), static_cast<std::size_t>(n), index, open);
        if (n > 0 &&
            ::send(p[1 - side].fd, buf.data(), static_cast<std::size_t>(n), MSG_NOSIGNAL) != n)
          open = false;
      }
    }
    ::close(client);
    ::close(server);
  }

  // Records client-to-server bytes and applies the attack; returns how many to forward.
  long tamper(char* data, std::size_t n, std::size_t index, bool& open) {
    std::lock_guard lock(mutex_);
    const auto start = static_cast<std::int64_t>(captured_.size());
    captured_.append(data, n);
    connections_[index].append(data, n);
    const auto end = start + static_cast<std::int64_t>(n);
    if (attack_.flip_at >= start && attack_.flip_at < end) data[attack_.flip_at - start] ^= 0x20;
    if (attack_.freeze_after >= 0 && end >= attack_.freeze_after) frozen_ = true;
    if (attack_.cut_after >= 0 && end >= attack_.cut_after) {
      open = false;
      return attack_.cut_after > start ? attack_.cut_after - start : 0;
    }
    return static_cast<long>(n);
  }

  std::uint16_t server_port_;
  Attack attack_;
  int listen_fd_ = -1;
  std::uint16_t port_ = 0;
  std::atomic<bool> stopping_{false}, frozen_{false};
  std::thread acceptor_;
  std::vector<std::thread> pipes_;  // touched by the acceptor only, joined after it
  std::mutex mutex_;
  std::string captured_;
  std::vector<std::string> connections_;
};

}  // namespace nubo_test
