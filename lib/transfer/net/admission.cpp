#include "transfer/net/admission.hpp"

#include <arpa/inet.h>
#include <sys/socket.h>

#include <algorithm>

#include "common/text.hpp"
#include "common/tls.hpp"

namespace nubo::transfer::net {
namespace {

// Buckets kept before those full again are forgotten.
constexpr std::size_t kMaxBuckets = 4096;

}  // namespace

std::string Admission::source_of(const std::string& address) {
  std::string a = address;
  if (a.size() >= 2 && a.front() == '[' && a.back() == ']') a = a.substr(1, a.size() - 2);
  unsigned char v6[16];
  if (a.find(':') == std::string::npos || ::inet_pton(AF_INET6, a.c_str(), v6) != 1) return a;
  // One host's addresses, whatever it picks. Built by += steps: GCC 12 reports a false
  // -Werror=restrict for chains of operator+ with literals (GCC bug 105329).
  std::string key = "[";
  key += text::hex(v6, 8);
  key += "::/64]";
  return key;
}

bool Admission::spoke(Pending& p) {
  if (p.stage != Stage::silent) return true;
  unsigned char b[3];
  const auto n = ::recv(p.fd, b, sizeof b, MSG_PEEK | MSG_DONTWAIT);
  if (n < 1) return false;
  // A TLS handshake record (0x16, version 3.x), or a nubo frame in the clear ('N').
  const bool tls =
      b[0] == tls::kHandshakeRecord && (n < 2 || b[1] == 3) && (n < 3 || (b[2] >= 1 && b[2] <= 4));
  if (tls || b[0] == 'N') p.stage = Stage::speaking;
  return p.stage != Stage::silent;
}

Admission::Bucket& Admission::bucket(const std::string& source, Clock::time_point now) {
  const auto refilled = [&](const Bucket& b) {
    const double elapsed = std::chrono::duration<double>(now - b.at).count();
    return std::min(limits_.drop_burst, b.tokens + elapsed * limits_.drops_per_second);
  };
  if (buckets_.size() > kMaxBuckets)
    std::erase_if(buckets_,
                  [&](const auto& kv) { return refilled(kv.second) >= limits_.drop_burst; });
  auto [it, fresh] = buckets_.try_emplace(source, Bucket{limits_.drop_burst, now});
  if (!fresh) {
    it->second.tokens = refilled(it->second);
    it->second.at = now;
  }
  return it->second;
}

void Admission::charge(const std::string& source, Clock::time_point now) {
  auto& b = bucket(source, now);
  b.tokens = std::max(0.0, b.tokens - 1);
}

void Admission::dropped(const std::string& address, Clock::time_point now) {
  charge(source_of(address), now);
}

Admission::Decision Admission::arrive(std::uint64_t id, int fd, const std::string& address,
                                      Clock::time_point now) {
  Decision d;
  const auto source = source_of(address);
  if (bucket(source, now).tokens < 1) {
    d.refusal = Refusal::rate;
    return d;
  }
  const auto from_source = std::count_if(
      pending_.begin(), pending_.end(), [&](const auto& kv) { return kv.second.source == source; });
  if (from_source >= limits_.max_pending_per_address) {
    d.refusal = Refusal::address;
    return d;
  }
  // Full: a connection that has sent nothing makes way, and only such a one: of those, the one
  // whose address lost the most connections lately, then the oldest. Never one whose address
  // has lost fewer than the newcomer's: a newcomer from a flood does not push out a sender.
  const double credit = bucket(source, now).tokens;
  while (pending_.size() >= static_cast<std::size_t>(limits_.max_pending)) {
    auto victim = pending_.end();
    double lowest = 0;
    for (auto it = pending_.begin(); it != pending_.end(); ++it) {
      if (spoke(it->second)) continue;
      const double c = bucket(it->second.source, now).tokens;
      if (victim == pending_.end() || c < lowest) {
        victim = it;
        lowest = c;
      }
    }
    if (victim == pending_.end() || lowest > credit) {
      d.refusal = Refusal::full;
      return d;
    }
    d.evicted.push_back(victim->first);
    charge(victim->second.source, now);
    pending_.erase(victim);
  }
  pending_[id] = Pending{fd, source, Stage::silent};
  return d;
}

void Admission::handshaken(std::uint64_t id) {
  if (auto it = pending_.find(id); it != pending_.end()) it->second.stage = Stage::handshaken;
}

void Admission::leave(std::uint64_t id) {
  pending_.erase(id);
}

}  // namespace nubo::transfer::net
