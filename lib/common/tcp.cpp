#include "common/tcp.hpp"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

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

#include "common/tls.hpp"
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
    ssl_ = std::exchange(o.ssl_, nullptr);
    peer_ = std::move(o.peer_);
    timeout_ms_ = o.timeout_ms_;
    deadline_ = o.deadline_;
  }
  return *this;
}

Socket::~Socket() {
  close();
}

void Socket::close() {
  if (ssl_) SSL_free(ssl_);
  ssl_ = nullptr;
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
    int ms = timeout_ms_;
    bool by_deadline = false;
    if (deadline_) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                            *deadline_ - std::chrono::steady_clock::now())
                            .count();
      if (left < ms) {
        ms = static_cast<int>(std::max<long long>(left, 0));
        by_deadline = true;
      }
    }
    int rc = ::poll(&p, 1, ms);
    if (rc > 0) return;
    if (rc == 0 && by_deadline)
      throw Error(Errc::timeout, "peer " + peer_ + " did not finish the handshake in time");
    if (rc == 0)
      throw Error(Errc::timeout, "peer " + peer_ + " stalled: nothing for " +
                                     std::to_string(timeout_ms_ / 1000) + " s");
    if (errno != EINTR) sys_fail(Errc::io, "poll", errno);
  }
}

bool Socket::tls_retry(int rc, const char* what) {
  const int err = SSL_get_error(ssl_, rc);
  if (err == SSL_ERROR_WANT_READ) {
    wait(POLLIN);
    return true;
  }
  if (err == SSL_ERROR_WANT_WRITE) {
    wait(POLLOUT);
    return true;
  }
  if (err == SSL_ERROR_ZERO_RETURN ||
      (err == SSL_ERROR_SYSCALL && ERR_peek_error() == 0 && (errno == 0 || errno == ECONNRESET)))
    throw Error(Errc::unavailable, "connection closed by " + peer_);
  if (err == SSL_ERROR_SYSCALL && ERR_peek_error() == 0)
    sys_fail(Errc::unavailable, std::string(what) + " " + peer_, errno);
  switch (tls::classify(ERR_peek_error(), handshake_psk_)) {
    case tls::Failure::closed:
      ERR_clear_error();
      throw Error(Errc::unavailable, "connection closed by " + peer_);
    case tls::Failure::wrong_key:
      ERR_clear_error();
      throw Error(Errc::invalid_argument,
                  "TLS handshake with " + peer_ +
                      " failed: the token does not match (the key derived from it did not "
                      "verify); check NUBO_TOKEN or --token-file on both sides");
    case tls::Failure::other:
      break;
  }
  // A record that fails authentication, a bad handshake message, an alert from the peer.
  throw Error(Errc::unavailable, std::string("TLS ") + what + " " + peer_ +
                                     " failed: " + tls::last_error("unknown TLS error") +
                                     " (the data was altered on the way, or the peer is not "
                                     "who it should be)");
}

void Socket::start_tls(const tls::Context& context, const std::string& host) {
  if (ssl_) throw Error(Errc::internal, "TLS started twice on " + peer_);
  ERR_clear_error();
  ssl_ = SSL_new(context.get());
  if (!ssl_) throw Error(Errc::internal, "TLS: " + tls::last_error("SSL_new failed"));
  // A client looks at the server's first byte before TLS reads it: a server that refuses
  // before any handshake (too busy, or it wants what this client does not do) answers in the
  // clear. Its bio reads nothing until then, however soon that answer arrives.
  bool first_answer = !context.server_side();
  BIO* bio = tls::socket_bio(fd_, first_answer);
  SSL_set_bio(ssl_, bio, bio);  // the SSL owns it from here
  SSL_set_mode(ssl_, SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  if (context.server_side()) {
    SSL_set_accept_state(ssl_);
  } else {
    const std::string& name =
        context.options().server_name.empty() ? host : context.options().server_name;
    if (!context.options().ca_file.empty() && !name.empty()) {
      SSL_set_tlsext_host_name(ssl_, name.c_str());
      if (SSL_set1_host(ssl_, name.c_str()) != 1)
        throw Error(Errc::internal, "TLS: " + tls::last_error("SSL_set1_host failed"));
    }
    SSL_set_connect_state(ssl_);
  }
  handshake_psk_ = !context.psk().empty() && context.options().ca_file.empty();
  for (;;) {
    ERR_clear_error();
    const int rc = SSL_do_handshake(ssl_);
    if (rc == 1) break;
    // Only a client checking a CA verifies certificates (a PSK session carries no result).
    const bool checks_certificate = !context.server_side() && !context.options().ca_file.empty();
    const long verify = checks_certificate ? SSL_get_verify_result(ssl_) : X509_V_OK;
    if (verify != X509_V_OK)
      throw Error(Errc::unavailable, "TLS handshake with " + peer_ +
                                         " failed: its certificate does not verify (" +
                                         X509_verify_cert_error_string(verify) + ")");
    if (first_answer && SSL_get_error(ssl_, rc) == SSL_ERROR_WANT_READ) {
      first_answer = false;
      const auto b = std::to_integer<unsigned char>(peek_byte());
      // TLS records are of types 20 to 23 (change_cipher_spec, alert, handshake, data).
      if (b < 20 || b > 23) {
        SSL_free(ssl_);
        ssl_ = nullptr;
        throw Error(Errc::unavailable, "peer " + peer_ + " answered in the clear, not with TLS");
      }
      tls::release_reads(bio);
      continue;
    }
    tls_retry(rc, "handshake with");
  }
  handshake_psk_ = false;
}

std::byte Socket::peek_byte() {
  std::byte b{};
  for (;;) {
    auto n = ::recv(fd_, &b, 1, MSG_PEEK);
    if (n == 1) return b;
    if (n == 0) throw Error(Errc::unavailable, "connection closed by " + peer_);
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK)
      sys_fail(Errc::unavailable, "reading from " + peer_, errno);
    wait(POLLIN);
  }
}

void Socket::read_exact(std::span<std::byte> out) {
  std::size_t done = 0;
  if (ssl_) {
    while (done < out.size()) {
      std::size_t n = 0;
      ERR_clear_error();
      const int rc = SSL_read_ex(ssl_, out.data() + done, out.size() - done, &n);
      if (rc == 1) {
        done += n;
        continue;
      }
      tls_retry(rc, "reading from");
    }
    return;
  }
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
  if (ssl_) {
    while (done < data.size()) {
      std::size_t n = 0;
      ERR_clear_error();
      const int rc = SSL_write_ex(ssl_, data.data() + done, data.size() - done, &n);
      if (rc == 1) {
        done += n;
        continue;
      }
      tls_retry(rc, "writing to");
    }
    return;
  }
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
  // SSL_has_pending also counts raw records read ahead but not yet decrypted.
  if (ssl_ && SSL_has_pending(ssl_)) return true;
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
  close();
  for (int f : wake_)
    if (f >= 0) ::close(f);
}

void Listener::stop() {
  char c = 1;
  [[maybe_unused]] auto n = ::write(wake_[1], &c, 1);
}

void Listener::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
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
