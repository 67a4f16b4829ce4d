#include "common/tcp.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "nubo/error.hpp"

namespace nubo::tcp {
namespace {

[[noreturn]] void sys_fail(Errc code, const std::string& what, int err) {
  throw Error(code, what + ": " + std::strerror(err));
}

void set_nonblocking(int fd) {
  int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0 || ::fcntl(fd, F_SETFL, flags | O_NONBLOCK) != 0)
    sys_fail(Errc::io, "fcntl(O_NONBLOCK)", errno);
}

void tune(int fd) {
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  // Large buffers: a chunk is megabytes, and long fat links need the window.
  int buf = 4 << 20;
  ::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buf, sizeof buf);
  ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof buf);
}

int to_ms(double seconds) {
  if (seconds <= 0) return 30000;
  return static_cast<int>(std::min(seconds * 1000.0, 86400e3)) + 1;
}

std::string describe(const sockaddr* sa) {
  char host[NI_MAXHOST], serv[NI_MAXSERV];
  socklen_t len = sa->sa_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
  if (::getnameinfo(sa, len, host, sizeof host, serv, sizeof serv,
                    NI_NUMERICHOST | NI_NUMERICSERV) != 0)
    return "?";
  std::string h = host;
  if (sa->sa_family == AF_INET6) h = "[" + h + "]";
  return h + ":" + serv;
}

addrinfo* resolve(const HostPort& e, bool passive) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  if (passive) hints.ai_flags = AI_PASSIVE;
  addrinfo* res = nullptr;
  auto port = std::to_string(e.port);
  int rc = ::getaddrinfo(e.host.empty() ? nullptr : e.host.c_str(), port.c_str(), &hints, &res);
  if (rc != 0)
    throw Error(Errc::unavailable, "cannot resolve '" + e.host + "': " + ::gai_strerror(rc));
  return res;
}

}  // namespace

HostPort parse_host_port(const std::string& text, const std::string& expected) {
  auto bad = [&](const std::string& why) -> HostPort {
    throw Error(Errc::invalid_argument,
                "address '" + text + "': " + why + " (expected " + expected + ")");
  };
  HostPort e;
  std::string port;
  if (!text.empty() && text.front() == '[') {
    auto close = text.find(']');
    if (close == std::string::npos || close + 1 >= text.size() || text[close + 1] != ':')
      return bad("an IPv6 address must be written [ADDR]:PORT");
    e.host = text.substr(1, close - 1);
    port = text.substr(close + 2);
  } else {
    auto colon = text.rfind(':');
    if (colon == std::string::npos) return bad("no port");
    e.host = text.substr(0, colon);
    port = text.substr(colon + 1);
  }
  if (e.host.empty()) return bad("no host");
  if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos)
    return bad("the port is not a number");
  auto p = std::stoul(port);
  if (p > 65535) return bad("the port is above 65535");
  e.port = static_cast<std::uint16_t>(p);
  return e;
}

Socket::Socket(int fd, std::string peer, double timeout_seconds)
    : fd_(fd), peer_(std::move(peer)), timeout_ms_(to_ms(timeout_seconds)) {}

Socket& Socket::operator=(Socket&& o) noexcept {
  if (this != &o) {
    close();
    fd_ = std::exchange(o.fd_, -1);
    peer_ = std::move(o.peer_);
    timeout_ms_ = o.timeout_ms_;
  }
  return *this;
}

Socket::~Socket() {
  close();
}

void Socket::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

void Socket::set_timeout(double seconds) {
  timeout_ms_ = to_ms(seconds);
}

void Socket::shutdown() const {
  if (fd_ >= 0) ::shutdown(fd_, SHUT_RDWR);
}

Socket Socket::connect(const HostPort& to, double timeout_seconds) {
  auto* res = resolve(to, false);
  std::string last = "no address";
  for (auto* ai = res; ai; ai = ai->ai_next) {
    int fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) continue;
    tune(fd);
    set_nonblocking(fd);
    Socket s(fd, describe(ai->ai_addr), timeout_seconds);
    if (::connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
      if (errno != EINPROGRESS) {
        last = std::strerror(errno);
        continue;
      }
      pollfd p{fd, POLLOUT, 0};
      int rc = ::poll(&p, 1, s.timeout_ms_);
      int err = 0;
      socklen_t len = sizeof err;
      if (rc <= 0) {
        last = rc == 0 ? "timed out" : std::strerror(errno);
        continue;
      }
      ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
      if (err != 0) {
        last = std::strerror(err);
        continue;
      }
    }
    ::freeaddrinfo(res);
    return s;
  }
  ::freeaddrinfo(res);
  throw Error(Errc::unavailable,
              "cannot connect to " + to.host + ":" + std::to_string(to.port) + ": " + last);
}

void Socket::wait(short events) {
  pollfd p{fd_, events, 0};
  for (;;) {
    int rc = ::poll(&p, 1, timeout_ms_);
    if (rc > 0) return;
    if (rc == 0)
      throw Error(Errc::timeout, "peer " + peer_ + " stalled: nothing for " +
                                     std::to_string(timeout_ms_ / 1000) + " s");
    if (errno != EINTR) sys_fail(Errc::io, "poll", errno);
  }
}

void Socket::read_exact(std::span<std::byte> out) {
  std::size_t done = 0;
  while (done < out.size()) {
    auto n = ::recv(fd_, out.data() + done, out.size() - done, 0);
    if (n > 0) {
      done += static_cast<std::size_t>(n);
      continue;
    }
    if (n == 0) throw Error(Errc::unavailable, "connection closed by " + peer_);
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK)
      sys_fail(Errc::unavailable, "reading from " + peer_, errno);
    wait(POLLIN);
  }
}

void Socket::write_all(std::span<const std::byte> data) {
  std::size_t done = 0;
  while (done < data.size()) {
    auto n = ::send(fd_, data.data() + done, data.size() - done, MSG_NOSIGNAL);
    if (n >= 0) {
      done += static_cast<std::size_t>(n);
      continue;
    }
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK)
      sys_fail(Errc::unavailable, "writing to " + peer_, errno);
    wait(POLLOUT);
  }
}

bool Socket::readable(int ms) const {
  pollfd p{fd_, POLLIN, 0};
  return ::poll(&p, 1, ms) > 0;
}

Listener::Listener(const HostPort& at, int backlog) {
  auto* res = resolve(at, true);
  std::string last = "no address";
  for (auto* ai = res; ai; ai = ai->ai_next) {
    int fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) continue;
    int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || ::listen(fd, backlog) != 0) {
      last = std::strerror(errno);
      ::close(fd);
      continue;
    }
    sockaddr_storage ss{};
    socklen_t len = sizeof ss;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len);
    auto name = describe(reinterpret_cast<sockaddr*>(&ss));
    auto colon = name.rfind(':');
    host_ = name.substr(0, colon);
    port_ = static_cast<std::uint16_t>(std::stoul(name.substr(colon + 1)));
    fd_ = fd;
    break;
  }
  ::freeaddrinfo(res);
  if (fd_ < 0)
    throw Error(Errc::unavailable,
                "cannot listen on " + at.host + ":" + std::to_string(at.port) + ": " + last);
  set_nonblocking(fd_);
  if (::pipe2(wake_, O_CLOEXEC | O_NONBLOCK) != 0) sys_fail(Errc::io, "pipe", errno);
}

Listener::~Listener() {
  if (fd_ >= 0) ::close(fd_);
  for (int f : wake_)
    if (f >= 0) ::close(f);
}

void Listener::stop() {
  char c = 1;
  [[maybe_unused]] auto n = ::write(wake_[1], &c, 1);
}

Socket Listener::accept(int wait_ms, double timeout_seconds) {
  pollfd p[2] = {{fd_, POLLIN, 0}, {wake_[0], POLLIN, 0}};
  int rc = ::poll(p, 2, wait_ms);
  if (rc <= 0 || (p[1].revents & POLLIN)) return {};
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  int fd = ::accept4(fd_, reinterpret_cast<sockaddr*>(&ss), &len, SOCK_CLOEXEC | SOCK_NONBLOCK);
  if (fd < 0) return {};
  tune(fd);
  return Socket(fd, describe(reinterpret_cast<sockaddr*>(&ss)), timeout_seconds);
}

}  // namespace nubo::tcp
