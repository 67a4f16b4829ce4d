// Connections dropped before they authenticated, logged as one line every period instead of one
// line each: "dropped 2,600 connections from 50 addresses in the last 10 s: 2,400 idle, evicted
// for newcomers; 200 over the rate of new connections per address". A flood must not flood the
// log too (one warning per drop made 66,000 lines in 25 s).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>

namespace nubo::transfer::net {

class DropReport {
 public:
  using Clock = std::chrono::steady_clock;
  explicit DropReport(std::chrono::seconds period = std::chrono::seconds(10),
                      Clock::time_point now = Clock::now())
      : period_(period), since_(now) {}

  // One connection from `address` dropped, for `why` ("idle, evicted for newcomers"); `example`
  // (the first of its kind in the period is kept) says more, e.g. a handshake's error.
  void note(const std::string& why, const std::string& address, const std::string& example = {});
  // The line to log once a period has passed with drops in it (or at once when `final`), and
  // the counts start again; nullopt otherwise.
  std::optional<std::string> due(Clock::time_point now, bool final = false);

 private:
  static constexpr std::size_t kMaxAddresses = 100000;  // counted exactly up to this many

  std::chrono::seconds period_;
  Clock::time_point since_;
  std::map<std::string, std::uint64_t> by_reason_;
  std::map<std::string, std::string> examples_;
  std::set<std::string> addresses_;
  std::uint64_t total_ = 0;
};

}  // namespace nubo::transfer::net
