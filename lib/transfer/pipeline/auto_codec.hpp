// Codec `auto`: for each chunk, the codec that gets the data through soonest.
//
// A chunk flows through three stages at once: reading it, compressing it (on `workers` cores)
// and sending the compressed bytes out (a disk, or a link at the target rate). The slowest stage
// sets the pace, so for each candidate c the time per raw byte is
//     max(1 / input_rate, 1 / (speed_c * workers), ratio_c / output_rate)
// and the fastest candidate wins; among candidates within 5% of it the smallest output does.
// The ratio of each candidate is predicted from a cheap probe of the chunk itself (lz4 on
// 64 KiB sampled in four slices across it) times what that candidate achieved relative to the probe
// on recent chunks; its speed is what it achieved recently. Both are moving averages, and every
// 16th chunk tries a neighbour of the best choice, so the choice follows the data and the output
// speed as they change. Incompressible samples go straight to `none`, unless they look like a
// float tensor (float_planes.hpp): those take the float codec, at level 1. Without a target rate
// the output rate is the measured one, capped for files at 1 GB/s (page-cache writes measure far
// faster than the device).
//
// The model cannot see what else competes for the cores (a receiver on the same machine, other
// programs) nor the slack that incompressible chunks leave them, so where the output has a
// queue (the network's send queue) its fill corrects the cores' cost in the model, as zstd's
// --adapt does: a full queue means the output is behind (compress harder), an empty one that
// compression is behind (compress lighter); the correction settles where it is half full.
//
// Thread-safe: workers call choose() and observe() concurrently; the reader and the writer
// report their rates. The network transfer feeds the link's measured rate via set_output_rate.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

#include "transfer/codec/codec.hpp"

namespace nubo::transfer {

class AutoCodec {
 public:
  // Without a target rate, a file's output is assumed no faster than this, whatever its writes
  // measure: the page cache absorbs them at memory speed and they reach the device later, and
  // an archive is usually written to be moved or kept, where size matters.
  static constexpr double kFileOutputCap = 1e9;

  // `max_level` caps the zstd levels considered; `target_rate` (bytes/s, 0: measure) is the
  // output's speed; a measured one counts as at most `measured_output_cap`.
  AutoCodec(int workers, int max_level, double target_rate,
            double measured_output_cap = kFileOutputCap);

  struct Choice {
    CodecSetting setting;
    double probe_ratio = 1;  // the sample's lz4 ratio, passed back to observe()
  };
  Choice choose(Bytes chunk, Compressor& probe);
  // What compressing the chunk with choice.setting gave: its stored size and the seconds taken.
  void observe(const Choice& choice, std::size_t raw, std::size_t stored, double seconds);

  // Measured throughputs of the stages around compression: bytes moved and the seconds spent
  // moving them (time inside read/write calls, so a stage's capacity rather than its pace).
  void observe_input(std::size_t bytes, double seconds);
  void observe_output(std::size_t bytes, double seconds);
  void set_output_rate(double bytes_per_second);  // 0: go back to measuring
  // The fill of the output's queue (0 empty .. 1 full) as a message joins it.
  void observe_backlog(double fill);

  // The candidates, for tests and benchmarks.
  std::vector<CodecSetting> candidates() const;

  static constexpr std::size_t kProbeBuckets = 4;

 private:
  struct Candidate {
    CodecSetting setting;
    double shape;  // zstd: its ratio / zstd-1's on the same data
    double speed;  // raw bytes/s on one core
  };
  static std::size_t bucket(double probe_ratio);
  double predicted_ratio(const Candidate& c, double probe_ratio) const;
  std::size_t pick(double probe_ratio) const;

  int workers_;
  double measured_output_cap_;
  mutable std::mutex mutex_;
  std::vector<Candidate> candidates_;
  // Per kind of chunk: lz4's and zstd-1's ratio / the probe's.
  std::array<double, kProbeBuckets> lz4_relative_{}, zstd_relative_{};
  double input_rate_ = 0, measured_output_rate_ = 0;
  double cpu_weight_ = 1;      // the cores' cost in the model, corrected by observe_backlog
  double backlog_fill_ = 0.5;  // the output queue's recent fill
  bool backlog_seen_full_ = false;
  std::uint64_t backlog_seen_ = 0;
  std::atomic<double> target_rate_;
  std::uint64_t chunks_ = 0;
};

}  // namespace nubo::transfer
