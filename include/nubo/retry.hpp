// How an operation that may fail for a while is tried again: the tries in all, and the wait
// before each new one, doubling from a first delay up to a cap, drawn at random from its upper
// half when `jitter` is set (AWS's "equal jitter", so that many clients retrying at once spread
// out). One type for every retry in nubo: object storage, a Redis rendezvous, a connection whose
// handshake failed, nubo-run's restarts of a failing job; public so that a program's own loop
// can retry the same way.
#pragma once

#include <algorithm>
#include <cmath>
#include <random>

namespace nubo {

struct RetryPolicy {
  int attempts = 1;          // tries in all, the first included
  double first_delay_s = 0;  // the wait after the first failure; doubles after each further one
  double max_delay_s = 0;    // the most one wait may be
  bool jitter = false;       // each wait drawn from [delay / 2, delay]

  // Whether to try again after `failed` tries failed (failed >= 1).
  bool again(int failed) const { return failed < attempts; }
  // The wait before the next try after `failed` failures, in seconds, before any jitter.
  double base_delay_s(int failed) const {
    return std::min(max_delay_s, first_delay_s * std::ldexp(1.0, std::min(failed - 1, 30)));
  }
  // The wait before the next try after `failed` failures, in seconds.
  double delay_s(int failed, std::mt19937_64& rng) const {
    const double d = base_delay_s(failed);
    if (!jitter || d <= 0) return d;
    return std::uniform_real_distribution<double>(d / 2, d)(rng);
  }
};

}  // namespace nubo
