// Who holds a connection before authenticating (transfer/net/admission.hpp), and how drops are
// reported (drop_report.hpp): unit tests over socket pairs, whose first bytes say whether the
// "client" has begun a handshake.
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <string>
#include <vector>

#include "transfer/net/admission.hpp"
#include "transfer/net/drop_report.hpp"

namespace tn = nubo::transfer::net;
using Refusal = tn::Admission::Refusal;
using namespace std::chrono_literals;

namespace {

// A connection as the server sees it: `server` is what admission peeks at; what the client
// writes on `client` waits there.
struct Conn {
  int server = -1, client = -1;
  Conn() {
    int fds[2];
    REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds) == 0);
    server = fds[0];
    client = fds[1];
  }
  ~Conn() {
    ::close(server);
    ::close(client);
  }
  void says(const std::string& bytes) const {
    REQUIRE(::write(client, bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size()));
  }
};

const std::string kClientHelloStart("\x16\x03\x01\x00\xc8", 5);

}  // namespace

TEST_CASE("a full budget evicts the oldest connection that has sent nothing, and only such") {
  tn::Admission a({.max_pending = 3, .max_pending_per_address = 4});
  const auto now = tn::Admission::Clock::now();
  Conn c0, c1, c2, c3, c4, c5;
  CHECK(a.arrive(0, c0.server, "10.0.0.1", now).evicted.empty());
  CHECK(a.arrive(1, c1.server, "10.0.0.2", now).evicted.empty());
  CHECK(a.arrive(2, c2.server, "10.0.0.3", now).evicted.empty());
  // 0 has begun a TLS handshake: 1, the oldest silent one, makes way.
  c0.says(kClientHelloStart);
  auto d = a.arrive(3, c3.server, "10.0.0.4", now);
  CHECK(d.refusal == Refusal::none);
  CHECK(d.evicted == std::vector<std::uint64_t>{1});
  // A nubo hello in the clear counts as speaking too; garbage does not.
  c2.says("N\x01");
  c3.says("GET / HTTP/1.1\r\n");
  d = a.arrive(4, c4.server, "10.0.0.5", now);
  CHECK(d.evicted == std::vector<std::uint64_t>{3});
  // Everyone speaking or done with TLS: the newcomer is refused, no handshake is cut.
  c4.says(kClientHelloStart);
  a.handshaken(0);
  d = a.arrive(5, c5.server, "10.0.0.6", now);
  CHECK(d.refusal == Refusal::full);
  CHECK(d.evicted.empty());
  // One authenticates: room again.
  a.leave(0);
  CHECK(a.arrive(5, c5.server, "10.0.0.6", now).refusal == Refusal::none);
}

TEST_CASE("an address may hold a few pending connections") {
  tn::Admission a({.max_pending = 1000, .max_pending_per_address = 2});
  const auto now = tn::Admission::Clock::now();
  std::vector<Conn> conns(4);
  CHECK(a.arrive(0, conns[0].server, "10.0.0.1", now).refusal == Refusal::none);
  CHECK(a.arrive(1, conns[1].server, "10.0.0.1", now).refusal == Refusal::none);
  CHECK(a.arrive(2, conns[2].server, "10.0.0.1", now).refusal == Refusal::address);
  CHECK(a.arrive(3, conns[3].server, "10.0.0.2", now).refusal == Refusal::none);
  a.leave(0);
  CHECK(a.arrive(2, conns[2].server, "10.0.0.1", now).refusal == Refusal::none);
}

TEST_CASE("an address whose connections keep coming to nothing is refused for a while") {
  tn::Admission a(
      {.max_pending = 2, .max_pending_per_address = 100, .drops_per_second = 4, .drop_burst = 8});
  auto now = tn::Admission::Clock::now();
  std::vector<Conn> conns(40);
  // A sender that authenticates loses nothing, however many connections it opens.
  for (std::uint64_t id = 0; id < 30; ++id) {
    REQUIRE(a.arrive(id, conns[id].server, "10.0.0.9", now).refusal == Refusal::none);
    a.leave(id);
  }
  // Idle ones evicted for newcomers, and handshakes that failed, are charged to their address:
  // 8 at once, then 4 a second.
  int admitted = 0;
  for (std::uint64_t id = 100; id < 120; ++id)
    admitted += a.arrive(id, conns[id - 100].server, "10.0.0.1", now).refusal == Refusal::none;
  CHECK(admitted == 10);  // 2 pending, 8 evicted, then refused
  CHECK(a.arrive(200, conns[20].server, "10.0.0.1", now).refusal == Refusal::rate);
  now += std::chrono::milliseconds(500);  // two more drops allowed
  a.dropped("10.0.0.1", now);
  CHECK(a.arrive(201, conns[21].server, "10.0.0.1", now).refusal == Refusal::none);
  a.dropped("10.0.0.1", now);
  CHECK(a.arrive(202, conns[22].server, "10.0.0.1", now).refusal == Refusal::rate);
  // Others are not charged for it.
  a.leave(201);
  CHECK(a.arrive(203, conns[23].server, "10.0.0.9", now).refusal == Refusal::none);
}

TEST_CASE("an IPv6 host counts as its /64") {
  using tn::Admission;
  CHECK(Admission::source_of("[2001:db8::1]") == Admission::source_of("[2001:db8::ffff]"));
  CHECK(Admission::source_of("[2001:db8::1]") != Admission::source_of("[2001:db8:0:1::1]"));
  CHECK(Admission::source_of("10.0.0.1") == "10.0.0.1");
  CHECK(Admission::source_of("[::ffff:10.0.0.1]") != Admission::source_of("10.0.0.1"));
}

TEST_CASE("drops are reported as one line per period, with counts, addresses and an example") {
  const auto t0 = tn::DropReport::Clock::now();
  tn::DropReport r(10s, t0);
  CHECK_FALSE(r.due(t0 + 20s));  // nothing dropped: nothing to say
  for (int i = 0; i < 2600; ++i) r.note("idle, evicted", "127.0.0." + std::to_string(2 + i % 50));
  r.note("ended before authenticating", "127.0.0.1", "127.0.0.1:5000: handshake timed out");
  CHECK_FALSE(r.due(t0 + 25s));  // the period began when the first drop came
  const auto line = r.due(t0 + 31s);
  REQUIRE(line);
  CHECK(*line ==
        "dropped 2,601 connections from 51 addresses in the last 11 s before they "
        "authenticated: 1 ended before authenticating (e.g. 127.0.0.1:5000: handshake timed "
        "out); 2,600 idle, evicted");
  CHECK_FALSE(r.due(t0 + 60s));  // counted afresh
  r.note("idle, evicted", "127.0.0.2");
  CHECK(r.due(t0 + 61s, true));  // at stop, whatever the period
}
