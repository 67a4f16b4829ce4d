#include "transfer/pipeline/auto_codec.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "transfer/codec/float_planes.hpp"

namespace nubo::transfer {
namespace {

constexpr std::size_t kProbeBytes = 64 << 10;
constexpr std::size_t kProbeSlices = 4;
constexpr double kIncompressible = 0.97;  // a probe ratio above this: store raw
constexpr double kAlpha = 0.2;            // weight of a new sample in the moving averages
constexpr double kNear = 1.05;            // "about as fast"
constexpr std::uint64_t kExploreEvery = 16;
// Chunk kinds, by the probe's ratio in quarters: what compression achieves relative to the
// probe is learned for each kind apart (text and already-compressed data differ).
constexpr double kBucketWidth = 1.0 / AutoCodec::kProbeBuckets;
// Until measured, the stages around compression are assumed fast (a local disk in cache).
constexpr double kDefaultIoRate = 2e9;
// The cores' cost in the model goes from 1/kBacklogRange (the output's queue always full) to
// kBacklogRange (always empty): a level or two either way, never an extreme.
constexpr double kBacklogRange = 2;
constexpr std::uint64_t kBacklogWarmup = 16;

void blend(double& average, double sample) {
  average = average == 0 ? sample : average + kAlpha * (sample - average);
}

}  // namespace

AutoCodec::AutoCodec(int workers, int max_level, double target_rate, double measured_output_cap)
    : workers_(std::max(1, workers)),
      measured_output_cap_(measured_output_cap),
      target_rate_(target_rate) {
  // Starting points from typical text on one modern core; replaced by measurements at once.
  // A zstd level's ratio is the learned ratio of zstd-1 times its shape: levels are compared
  // on the same data even when each was tried on other chunks.
  candidates_ = {{{ChunkCodec::none, 0}, 1.0, 8e9},
                 {{ChunkCodec::lz4, 1}, 1.0, 600e6},
                 {{ChunkCodec::zstd, 1}, 1.0, 400e6},
                 {{ChunkCodec::zstd, 3}, 0.90, 250e6}};
  const std::pair<int, double> stronger[] = {
      {6, 0.85}, {9, 0.81}, {12, 0.79}, {15, 0.76}, {19, 0.73}};
  for (auto [level, shape] : stronger) {
    if (level > max_level) break;
    candidates_.push_back({{ChunkCodec::zstd, level}, shape, 250e6 * 3 / (level + 1)});
  }
  lz4_relative_.fill(1.0);
  zstd_relative_.fill(0.80);
}

std::size_t AutoCodec::bucket(double probe_ratio) {
  return std::min(kProbeBuckets - 1, static_cast<std::size_t>(probe_ratio / kBucketWidth));
}

double AutoCodec::predicted_ratio(const Candidate& c, double probe_ratio) const {
  auto b = bucket(probe_ratio);
  switch (c.setting.codec) {
    case ChunkCodec::lz4:
      return std::min(1.0, probe_ratio * lz4_relative_[b]);
    case ChunkCodec::zstd:
      return std::min(1.0, probe_ratio * zstd_relative_[b] * c.shape);
    default:
      return 1.0;
  }
}

std::vector<CodecSetting> AutoCodec::candidates() const {
  std::lock_guard lock(mutex_);
  std::vector<CodecSetting> out;
  for (const auto& c : candidates_) out.push_back(c.setting);
  return out;
}

std::size_t AutoCodec::pick(double probe_ratio) const {
  double in = input_rate_ > 0 ? input_rate_ : kDefaultIoRate;
  double target = target_rate_.load();
  double out = target > 0
                   ? target
                   : std::min(measured_output_cap_,
                              measured_output_rate_ > 0 ? measured_output_rate_ : kDefaultIoRate);
  std::vector<double> time(candidates_.size()), ratio(candidates_.size());
  double best = std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < candidates_.size(); ++i) {
    const auto& c = candidates_[i];
    ratio[i] = predicted_ratio(c, probe_ratio);
    time[i] = std::max({1 / in, cpu_weight_ / (c.speed * workers_), ratio[i] / out});
    best = std::min(best, time[i]);
  }
  // Among the choices about as fast as the fastest, the smallest output (the first, fastest,
  // on a tie).
  std::size_t chosen = candidates_.size();
  for (std::size_t i = 0; i < candidates_.size(); ++i) {
    if (time[i] > best * kNear) continue;
    if (chosen == candidates_.size() || ratio[i] < ratio[chosen]) chosen = i;
  }
  return chosen;
}

AutoCodec::Choice AutoCodec::choose(Bytes chunk, Compressor& probe) {
  Choice choice;
  // The probe: lz4 on slices from across the chunk, side by side. A chunk is often not one
  // kind of data (a bundle of small files holds text and already-compressed files alike), and
  // one sample from its middle would judge all of it by one file.
  auto n = std::min(chunk.size(), kProbeBytes);
  thread_local std::vector<std::byte> sample_buffer, scratch;
  sample_buffer.resize(n);
  auto slice = n / kProbeSlices / 4 * 4;    // a whole number of fp32 values
  auto part = chunk.size() / kProbeSlices;  // at least a slice: n <= chunk.size()
  for (std::size_t i = 0; i < kProbeSlices; ++i) {
    auto len = i + 1 == kProbeSlices ? n - i * slice : slice;
    // Slice i from the middle of the i-th of kProbeSlices equal parts (the last may run over
    // the rounding at the end: kept inside the chunk).
    auto from = std::min(i * part + (part - std::min(part, len)) / 2, chunk.size() - len);
    // Slices start at the same offset modulo 4, so that the bytes of float values keep their
    // places across the sample (plane_stats reads it by position).
    from -= from % 4;
    std::copy_n(chunk.begin() + static_cast<std::ptrdiff_t>(from), len,
                sample_buffer.begin() + static_cast<std::ptrdiff_t>(i * slice));
  }
  Bytes sample{sample_buffer.data(), n};
  // Float tensors look incompressible to lz4 (random mantissas) yet save a good part under the
  // float codec, so they are told apart first, without the probe. Its level 1: the planes gain
  // little from higher zstd levels (bf16 weights: 0.665 of their size at level 1, 0.671 at 3,
  // 0.664 at 9, 0.648 at 19 for 40 times the time), and the lz4 probe the other candidates are
  // predicted from says nothing about planes.
  if (plane_stats(sample).float_like) {
    choice.setting = {ChunkCodec::floats, 1};
    return choice;
  }
  auto stored = probe.compress({ChunkCodec::lz4, 1}, sample, scratch);
  choice.probe_ratio = stored == 0 ? 1.0 : static_cast<double>(stored) / static_cast<double>(n);
  if (choice.probe_ratio > kIncompressible) {
    choice.setting = {ChunkCodec::none, 0};
    return choice;
  }
  std::lock_guard lock(mutex_);
  auto chosen = pick(choice.probe_ratio);
  if (++chunks_ % kExploreEvery == 0) {
    // Alternate between the stronger and the weaker neighbour.
    bool up = (chunks_ / kExploreEvery) % 2 == 0;
    if (up && chosen + 1 < candidates_.size()) {
      ++chosen;
    } else if (!up && chosen > 1) {  // never explore down to `none`: its cost is known
      --chosen;
    }
  }
  choice.setting = candidates_[chosen].setting;
  return choice;
}

void AutoCodec::observe(const Choice& choice, std::size_t raw, std::size_t stored, double seconds) {
  if (choice.setting.codec == ChunkCodec::none || raw == 0) return;
  std::lock_guard lock(mutex_);
  // Not paying (stored 0) means it achieved about the raw size.
  double ratio = stored == 0 ? 1.0 : static_cast<double>(stored) / static_cast<double>(raw);
  double relative = ratio / std::max(choice.probe_ratio, 0.01);
  auto b = bucket(choice.probe_ratio);
  for (auto& c : candidates_) {
    if (c.setting != choice.setting) continue;
    if (c.setting.codec == ChunkCodec::lz4) blend(lz4_relative_[b], relative);
    if (c.setting.codec == ChunkCodec::zstd) blend(zstd_relative_[b], relative / c.shape);
    if (seconds > 0) blend(c.speed, static_cast<double>(raw) / seconds);
  }
}

void AutoCodec::observe_input(std::size_t bytes, double seconds) {
  if (seconds <= 0 || bytes == 0) return;
  std::lock_guard lock(mutex_);
  blend(input_rate_, static_cast<double>(bytes) / seconds);
}

void AutoCodec::observe_output(std::size_t bytes, double seconds) {
  if (seconds <= 0 || bytes == 0) return;
  std::lock_guard lock(mutex_);
  blend(measured_output_rate_, static_cast<double>(bytes) / seconds);
}

void AutoCodec::observe_backlog(double fill) {
  std::lock_guard lock(mutex_);
  fill = std::clamp(fill, 0.0, 1.0);
  // The queue starts empty whatever the balance: its fill means something once it has been
  // full, or after the first messages.
  if (fill >= 1) backlog_seen_full_ = true;
  if (!backlog_seen_full_ && ++backlog_seen_ <= kBacklogWarmup) return;
  blend(backlog_fill_, fill);
  // Full: the output is behind, compression can afford more; empty: the other way; half: right.
  cpu_weight_ = std::pow(kBacklogRange, 1 - 2 * backlog_fill_);
}

void AutoCodec::set_output_rate(double bytes_per_second) {
  target_rate_ = bytes_per_second;
}

}  // namespace nubo::transfer
