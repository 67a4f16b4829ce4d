// Pacing and measuring the wire, shared by every stream of a send, and by the parts in flight of
// an object storage copy (--rate).
//
// RateLimiter: a token bucket over all streams together. acquire(n) returns when n more bytes
// may go out; a stream writes in slices so that several streams share the rate smoothly (a copy
// acquires part by part: its rate holds on average over the parts).
// LinkMeter: wire bytes and the time streams spent writing them, from which the link's capacity
// is estimated for codec `auto` (time inside writes, so capacity rather than pace), and the
// recent rate for progress.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>

namespace nubo::transfer {

class RateLimiter {
 public:
  explicit RateLimiter(double bytes_per_second) : rate_(bytes_per_second) {}
  bool limited() const { return rate_ > 0; }
  void acquire(std::size_t bytes);

 private:
  double rate_;
  std::mutex mutex_;
  std::chrono::steady_clock::time_point next_{};
};

class LinkMeter {
 public:
  void add(std::uint64_t bytes) { bytes_ += bytes; }
  std::uint64_t bytes() const { return bytes_; }
  // The rate over the last second or so; call from one thread.
  double recent_rate();

 private:
  std::atomic<std::uint64_t> bytes_{0};
  std::chrono::steady_clock::time_point last_{std::chrono::steady_clock::now()};
  std::uint64_t last_bytes_ = 0;
  double rate_ = 0;
};

}  // namespace nubo::transfer
