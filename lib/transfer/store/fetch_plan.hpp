// How a remote read sizes its read-ahead and when it gives up waiting on one request, from what
// its own requests measured: the latency (the time of a request that carries almost nothing) and
// the bandwidth of one connection (the bytes of a large request over its time less the latency).
// A loopback server and a store across a continent want windows 30 times apart; no constant
// suits both.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>

#include "transfer/byte_source.hpp"

namespace nubo::store {

struct LinkMeasure {
  double latency_s = 0;    // of a request: the round trip and the server's time to answer
  double bytes_per_s = 0;  // of one connection, once the answer flows
};

// The read-ahead for `streams` connections fetching at once over `link`:
// - a window is large enough that its latency is at most a ninth of its time (8 x latency x
//   bandwidth), rounded up to a power of two, from 1 MiB to 32 MiB;
// - the bytes ahead are four windows per connection (one in flight, three queued, which ride
//   out a server's pause), from 32 MiB to 128 MiB.
// So a remote read holds at most ahead + window bytes: 160 MiB.
transfer::Prefetch plan_prefetch(const LinkMeasure& link, int streams);

// How long a read waits for a range of `bytes` in flight before it asks for the same range again
// on a connection of its own: four times what the link makes it take, and at least 2 s, so that
// one stalled response (a slow server or a lost connection that has not timed out yet) delays
// a download by seconds rather than by the 30 s a stall takes to be declared.
double hedge_after_s(const LinkMeasure& link, std::uint64_t bytes);

// What the requests of one source measured: record() each completed request; measure() is
// empty until one has completed. Safe from several threads.
class LinkEstimate {
 public:
  void record(std::uint64_t bytes, double seconds);
  std::optional<LinkMeasure> measure() const;

 private:
  mutable std::mutex mutex_;
  double latency_s_ = -1;   // the shortest request so far
  double bytes_per_s_ = 0;  // smoothed over the large requests
};

}  // namespace nubo::store
