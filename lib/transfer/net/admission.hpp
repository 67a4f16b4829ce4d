// Who may hold a connection before it has authenticated (docs/net.md, "Hostile load"). A flood
// of connections that send nothing, from many addresses, must not starve a real sender:
//  - an address (an IPv6 /64 counts as one) whose connections keep coming to nothing (evicted
//    idle, a handshake that failed or ran out of time) is refused at once, before a newcomer of
//    its costs a thread: it may lose a burst of them, then a few a second. A sender that
//    authenticates loses nothing, however many connections it opens;
//  - each address may hold a few pending connections at once;
//  - all pending connections share a budget. When it is full, a newcomer takes the place of a
//    connection that has sent nothing at all: the one whose address lost the most connections
//    lately, then the oldest. One that has begun a TLS handshake (or a nubo hello in the clear)
//    is never evicted for it, nor is one whose TLS handshake is done (it holds a key from the
//    token), nor one from an address with a better record than the newcomer's. With none to
//    evict, the newcomer is refused instead.
// The server calls it under its own lock; it keeps no thread and does no blocking I/O.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

namespace nubo::transfer::net {

class Admission {
 public:
  using Clock = std::chrono::steady_clock;
  struct Limits {
    int max_pending = 16;
    int max_pending_per_address = 4;
    double drops_per_second = 2;  // connections an address may lose, sustained
    double drop_burst = 32;       // ... and at once
  };
  enum class Refusal { none, rate, address, full };
  struct Decision {
    Refusal refusal = Refusal::none;
    std::vector<std::uint64_t> evicted;  // connections to drop for this one (already forgotten)
  };

  explicit Admission(Limits limits) : limits_(limits) {}

  // A new connection `id` on socket `fd` from `address` (as address_of gives it).
  Decision arrive(std::uint64_t id, int fd, const std::string& address, Clock::time_point now);
  // Connection `id` finished its TLS handshake: it holds the token's key, and is never evicted.
  void handshaken(std::uint64_t id);
  // Connection `id` authenticated, or ended: it no longer counts.
  void leave(std::uint64_t id);
  // A connection from `address` came to nothing before it authenticated: charged to it.
  void dropped(const std::string& address, Clock::time_point now);

  // The key an address is counted under: itself, or its /64 for IPv6.
  static std::string source_of(const std::string& address);

 private:
  enum class Stage { silent, speaking, handshaken };
  struct Pending {
    int fd = -1;
    std::string source;
    Stage stage = Stage::silent;
  };
  struct Bucket {
    double tokens = 0;
    Clock::time_point at;
  };
  // Whether the connection has begun a handshake: the first bytes waiting on its socket are a
  // TLS handshake record's or a nubo frame's (looked at, not read).
  bool spoke(Pending& p);
  // The bucket of `source`, refilled up to `now`; and one drop charged to it.
  Bucket& bucket(const std::string& source, Clock::time_point now);
  void charge(const std::string& source, Clock::time_point now);

  Limits limits_;
  std::map<std::uint64_t, Pending> pending_;  // by id: oldest first
  std::unordered_map<std::string, Bucket> buckets_;
};

}  // namespace nubo::transfer::net
