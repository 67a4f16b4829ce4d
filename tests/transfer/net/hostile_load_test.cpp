// A server under hostile load and in awkward states: a flood of connects from many addresses,
// re-opened as soon as they are dropped; idle unauthenticated connections; a client dripping its
// handshake, a full server, a rerun after a cut link, a
// destination that does not exist, and setuid bits in what arrives.
#include <arpa/inet.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>

#include <chrono>
#include <thread>
#include "skip.hpp"

#include "error_of.hpp"
#include "net_helpers.hpp"
#include "proxy.hpp"
#include "transfer/net/wire.hpp"

namespace net = nubo::net;
namespace tn = nubo::transfer::net;
using nubo_test::contains;
using nubo_test::error_of;
using nubo_test::Proxy;
using nubo_test::TempDir;

namespace {

std::uint32_t mode_of(const std::string& path) {
  struct stat st {};
  REQUIRE(::lstat(path.c_str(), &st) == 0);
  return st.st_mode & 07777;
}

// Waits until the server closed `fd`, for at most `limit`; false if it stayed open.
bool closed_within(int fd, std::chrono::milliseconds limit) {
  const auto until = std::chrono::steady_clock::now() + limit;
  char b;
  while (std::chrono::steady_clock::now() < until) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 50) > 0) {
      auto n = ::recv(fd, &b, 1, MSG_DONTWAIT);
      if (n == 0 || (n < 0 && errno != EAGAIN)) return true;
    }
  }
  return false;
}

// A non-blocking TCP connect to 127.0.0.1:`port` from `source`; -1 when it fails at once.
int start_connect(const std::string& source, std::uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  sockaddr_in a{}, to{};
  a.sin_family = to.sin_family = AF_INET;
  ::inet_pton(AF_INET, source.c_str(), &a.sin_addr);
  ::inet_pton(AF_INET, "127.0.0.1", &to.sin_addr);
  to.sin_port = htons(port);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      (::connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to) != 0 && errno != EINPROGRESS)) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// The attack that once starved real senders: 200 bare connects, 4 each from 127.0.0.2 to
// 127.0.0.51, each re-opened as soon as the server drops it (thousands a second), and one
// client from 127.0.0.60 dripping a TLS ClientHello a byte every 200 ms.
class Flood {
 public:
  explicit Flood(std::uint16_t port) : port_(port), thread_([this] { run(); }) {}
  ~Flood() {
    stop_ = true;
    thread_.join();
  }
  std::uint64_t connects() const { return connects_; }

 private:
  void run() {
    constexpr int kBare = 200;
    std::vector<pollfd> fds(kBare + 1);
    auto source = [](std::size_t i) {
      return i < kBare ? "127.0.0." + std::to_string(2 + i / 4) : std::string("127.0.0.60");
    };
    auto reopen = [&](std::size_t i) {
      if (fds[i].fd >= 0) ::close(fds[i].fd);
      fds[i] = {start_connect(source(i), port_), POLLIN, 0};
      ++connects_;
    };
    for (std::size_t i = 0; i < fds.size(); ++i) {
      fds[i].fd = -1;
      reopen(i);
    }
    const std::string hello("\x16\x03\x01\x01\x00\x01\x00\x00\xfc\x03\x03", 11);
    std::size_t dripped = 0;
    auto next_drip = std::chrono::steady_clock::now();
    while (!stop_) {
      ::poll(fds.data(), fds.size(), 20);
      for (std::size_t i = 0; i < fds.size(); ++i) {
        if (fds[i].fd < 0) {
          reopen(i);
          continue;
        }
        if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
        char junk[256];
        const auto n = ::recv(fds[i].fd, junk, sizeof junk, MSG_DONTWAIT);
        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) {
          reopen(i);
          if (i == kBare) dripped = 0;
        }
      }
      if (std::chrono::steady_clock::now() >= next_drip) {
        next_drip += std::chrono::milliseconds(200);
        auto& drip = fds[kBare];
        if (drip.fd >= 0 && ::send(drip.fd, &hello[dripped % hello.size()], 1, MSG_NOSIGNAL) == 1)
          ++dripped;
      }
    }
    for (auto& p : fds)
      if (p.fd >= 0) ::close(p.fd);
  }

  std::uint16_t port_;
  std::atomic<bool> stop_{false};
  std::atomic<std::uint64_t> connects_{0};
  std::thread thread_;
};

// This process's stderr (where the server logs) into `path` for a scope.
class StderrTo {
 public:
  explicit StderrTo(const std::string& path) : saved_(::dup(2)) {
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ::dup2(fd, 2);
    ::close(fd);
  }
  ~StderrTo() {
    ::dup2(saved_, 2);
    ::close(saved_);
  }

 private:
  int saved_;
};

}  // namespace

TEST_CASE("a flood of connects re-opened as soon as dropped starves no sender, and logs little",
          "[net][hostile]") {
  TempDir t;
  nubo_test::write_file(t / "src/a", nubo_test::text_bytes(256 << 10, 5));
  nubo_test::write_file(t / "src/d/b", "small");
  std::uint64_t connects = 0;
  {
    StderrTo log(t / "server.log");
    net::Server server(nubo_test::serve_options(t / "dst", 30));
    Flood flood(server.port());
    while (flood.connects() < 1000) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    for (int i = 0; i < 8; ++i) {
      INFO("send " << i << " under the flood");
      const auto sub = "run" + std::to_string(i);
      auto s = net::send({t / "src"}, nubo_test::dest_of(server, sub), nubo_test::send_options(2));
      CHECK(s.files == 2);
      CHECK(nubo_test::same_tree(t / "src", t / ("dst/" + sub + "/src")));
    }
    connects = flood.connects();
  }
  INFO("the flood opened " << connects << " connections");
  // One line a period about the drops (and one at the end), not one per connection.
  const auto text = nubo_test::read_file(t / "server.log");
  const auto lines = std::count(text.begin(), text.end(), '\n');
  INFO(text.substr(0, 2000));
  CHECK(lines <= 10);
  CHECK(contains(text, "dropped "));
  CHECK(contains(text, "idle (nothing sent), evicted for newcomers"));
}

TEST_CASE("idle unauthenticated connections from many addresses do not starve a send",
          "[net][hostile]") {
  TempDir t;
  nubo_test::write_file(t / "src/a", nubo_test::text_bytes(1 << 20, 3));
  net::Server server(nubo_test::serve_options(t / "dst", 30));
  std::vector<int> idle;
  for (int i = 0; i < 200; ++i)
    idle.push_back(nubo_test::connect_from("127.0.0." + std::to_string(2 + i / 4), server.port()));
  // A legitimate sender finds room, and its data streams too.
  auto s = net::send({t / "src"}, nubo_test::dest_of(server), nubo_test::send_options(4));
  CHECK(s.files == 1);
  CHECK(nubo_test::same_tree(t / "src", t / "dst/src"));
  // The flood evicted only itself: at most the pending budget of it is still open.
  int open = 0;
  for (int fd : idle) open += !closed_within(fd, std::chrono::milliseconds(1));
  CHECK(open <= 16);
  for (int fd : idle) ::close(fd);
}

TEST_CASE("more connections than an address may have pending are refused with a reason",
          "[net][hostile]") {
  TempDir t;
  auto so = nubo_test::serve_options(t / "dst", 30);
  so.max_pending_per_address = 2;
  net::Server server(so);
  int a = nubo_test::connect_from("127.0.0.9", server.port());
  int b = nubo_test::connect_from("127.0.0.9", server.port());
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // both admitted as pending
  auto other_address = tn::Socket::connect({"127.0.0.1", server.port(), ""}, 5);
  int c = nubo_test::connect_from("127.0.0.9", server.port());
  tn::Socket refused(nubo::tcp::Socket(c, "127.0.0.9", 5));
  auto m = refused.read_message(tn::kMaxControl);
  CHECK(m.type == tn::MsgType::error);
  CHECK(contains(tn::decode_error(m.payload).text, "still authenticating"));
  ::close(a);
  ::close(b);
}

TEST_CASE("a sender over its address's pending limit is told so, not a TLS error",
          "[net][hostile]") {
  TempDir t;
  nubo_test::write_file(t / "src/a", "hello");
  auto so = nubo_test::serve_options(t / "dst", 30);
  so.max_pending_per_address = 2;
  net::Server server(so);
  // The refusal is written at once, in the clear: whenever it arrives, the TLS client reads it
  // as the server's answer rather than as a record of the wrong version.
  for (int i = 0; i < 5; ++i) {
    int a = nubo_test::connect_from("127.0.0.1", server.port());
    int b = nubo_test::connect_from("127.0.0.1", server.port());
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // both admitted as pending
    nubo::Errc code{};
    auto why = error_of(
        [&] { net::send({t / "src"}, nubo_test::dest_of(server), nubo_test::send_options(1)); },
        &code);
    CHECK(code == nubo::Errc::unavailable);
    CHECK(contains(why, "too many connections from your address are still authenticating"));
    CHECK(!contains(why, "wrong version number"));
    ::close(a);
    ::close(b);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

TEST_CASE("a client dripping its handshake is dropped at the handshake deadline",
          "[net][hostile]") {
  TempDir t;
  auto so = nubo_test::serve_options(t / "dst", 30);  // the idle timeout alone would wait 30 s
  so.handshake_seconds = 1;
  net::Server server(so);
  int fd = nubo_test::connect_from("127.0.0.1", server.port());
  auto frame = tn::frame(tn::MsgType::hello, tn::encode_hello({}));
  bool dropped = false;
  // One byte every 200 ms keeps a socket's idle timeout from ever firing; 10 s at most.
  for (std::size_t i = 0; i < 50 && !dropped; ++i) {
    if (::send(fd, &frame[i % frame.size()], 1, MSG_NOSIGNAL) != 1) dropped = true;
    dropped = dropped || closed_within(fd, std::chrono::milliseconds(200));
  }
  CHECK(dropped);
  ::close(fd);
  CHECK(server.stats().refused >= 1);
}

TEST_CASE("a full server tells the sender it is busy", "[net][hostile]") {
  TempDir t;
  nubo_test::write_file(t / "src/a", "hello");
  auto so = nubo_test::serve_options(t / "dst", 30);
  so.max_connections = 2;  // a send of one stream: its control and its data connection
  net::Server server(so);
  std::vector<tn::Socket> held;
  for (int i = 0; i < 2; ++i) {
    held.push_back(nubo_test::raw_connect(server));
    tn::client_handshake(held.back(), nubo_test::kToken, tn::Role::control, {});
  }
  auto why = error_of(
      [&] { net::send({t / "src"}, nubo_test::dest_of(server), nubo_test::send_options(1)); });
  CHECK(contains(why, "server busy"));
  held.clear();
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  net::send({t / "src"}, nubo_test::dest_of(server), nubo_test::send_options(1));
  CHECK(nubo_test::read_file(t / "dst/src/a") == "hello");
}

TEST_CASE("a rerun after a dead link takes over from the same sender, and others are told to wait",
          "[net][hostile]") {
  TempDir t;
  nubo_test::write_file(t / "src/big", nubo_test::random_bytes(4 << 20, 11));
  // A long timeout: without the takeover the rerun would be refused for all of it.
  net::Server server(nubo_test::serve_options(t / "dst", 120));
  auto o = nubo_test::send_options(1);
  o.codec = nubo::transfer::Codec::none;
  o.chunk_size = 64 << 10;
  o.timeout_seconds = 1;
  auto dead_link = [&](const std::string& source) {
    // The server lets go of an earlier sender's claim once it reads that sender's connection
    // closed; on a loaded machine that can come after the next attempt starts: tried again.
    for (int attempt = 0;; ++attempt) {
      auto proxy = std::make_unique<Proxy>(
          server.port(), Proxy::Attack{.source = source, .freeze_after = 1 << 20});
      const auto why = error_of([&] { net::send({t / "src"}, proxy->address(), o); });
      CHECK(why != "no error");
      if (!proxy->frozen() && contains(why, "wait about") && attempt < 50) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        continue;
      }
      CHECK(proxy->frozen());
      return proxy;  // the server still holds its connections open
    }
  };
  {
    auto frozen = dead_link("127.0.0.7");
    // From another address: told to wait, and for how long.
    auto why = error_of([&] { net::send({t / "src"}, nubo_test::dest_of(server), o); });
    CHECK(contains(why, "from 127.0.0.7"));
    CHECK(contains(why, "wait about"));
  }
  auto frozen = dead_link("127.0.0.1");
  o.timeout_seconds = 10;
  auto s = net::send({t / "src"}, nubo_test::dest_of(server), o);
  CHECK(nubo_test::same_tree(t / "src", t / "dst/src"));
  CHECK(s.bytes_resumed > 0);  // what the dead send had verified was kept
}

TEST_CASE("a destination that does not exist is an error naming it, unless mkdir",
          "[net][hostile]") {
  TempDir t;
  auto so = nubo_test::serve_options(t / "x");
  so.dest = t / "typo/deeper";
  auto why = error_of([&] { net::Server s(so); });
  CHECK(contains(why, t / "typo/deeper"));
  CHECK(contains(why, "--mkdir"));
  struct stat st {};
  CHECK(::stat((t / "typo").c_str(), &st) != 0);  // nothing was created
  so.mkdir = true;
  net::Server s(so);
  CHECK(::stat((t / "typo/deeper").c_str(), &st) == 0);
  nubo_test::write_file(t / "file", "x");
  so.dest = t / "file";
  CHECK(contains(error_of([&] { net::Server f(so); }), "not a directory"));
}

TEST_CASE("setuid, setgid and sticky bits are dropped unless preserved", "[net][hostile]") {
  TempDir t;
  nubo_test::write_file(t / "src/tool", "#!/bin/sh\n");
  nubo_test::write_file(t / "src/big-tool", nubo_test::random_bytes(300000, 5));
  nubo_test::make_dirs(t / "src/shared");
  REQUIRE(::chmod((t / "src/tool").c_str(), 06755) == 0);
  REQUIRE(::chmod((t / "src/big-tool").c_str(), 04750) == 0);
  REQUIRE(::chmod((t / "src/shared").c_str(), 01777) == 0);
  {
    net::Server server(nubo_test::serve_options(t / "dst"));
    net::send({t / "src"}, nubo_test::dest_of(server), nubo_test::send_options());
    CHECK(mode_of(t / "dst/src/tool") == 0755);
    CHECK(mode_of(t / "dst/src/big-tool") == 0750);
    CHECK(mode_of(t / "dst/src/shared") == 0777);
  }
  auto so = nubo_test::serve_options(t / "kept");
  so.preserve_special_modes = true;
  net::Server server(so);
  net::send({t / "src"}, nubo_test::dest_of(server), nubo_test::send_options());
  CHECK(mode_of(t / "kept/src/tool") == 06755);
  CHECK(mode_of(t / "kept/src/big-tool") == 04750);
  CHECK(mode_of(t / "kept/src/shared") == 01777);
}

TEST_CASE("a receiver whose disk fills tells the sender why", "[net][hostile]") {
  TempDir t;
  nubo_test::make_dirs(t / "small");
  // A 1 MiB file system for the destination; it takes root (or CAP_SYS_ADMIN) to mount one.
  const std::string mount = "mount -t tmpfs -o size=1m tmpfs '" + (t / "small") + "' 2>/dev/null";
  if (std::system(mount.c_str()) != 0) {
    NUBO_SKIP("cannot mount a small tmpfs here (not root?): the full-disk case is not tested");
  }
  struct Unmount {
    std::string path;
    ~Unmount() {
      const std::string cmd = "umount '" + path + "'";
      if (std::system(cmd.c_str()) != 0) {
      }
    }
  } unmount{t / "small"};
  nubo_test::write_file(t / "src/big", nubo_test::random_bytes(6 << 20, 21));
  net::Server server(nubo_test::serve_options(t / "small"));
  auto o = nubo_test::send_options(2);
  o.codec = nubo::transfer::Codec::none;
  o.chunk_size = 256 << 10;
  auto why = error_of([&] { net::send({t / "src"}, nubo_test::dest_of(server), o); });
  INFO(why);
  CHECK(contains(why, "No space left on device"));
  CHECK(contains(why, "refused"));  // the receiver's reason, not a reset
}
