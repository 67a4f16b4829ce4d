#include "transfer/net/send_jobs.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "transfer/chunk_encoder.hpp"

namespace nubo::transfer::net {
namespace {

using Clock = std::chrono::steady_clock;

// The contents remembered for copies: about 64 MB of memory at most, whatever the send.
constexpr std::size_t kMaxCarried = 1 << 20;

struct PayloadMeta {
  ChunkCodec codec = ChunkCodec::none;
  std::int8_t level = 0;
  std::uint64_t raw_hash = 0;
};

// The payload of a chunk or a bundle into job.out.body (chunk_encoder.hpp); the raw bytes
// travel as they are when compression does not pay.
PayloadMeta encode_payload(SendJob& job, const nubo::net::SendOptions& options,
                           AutoCodec* auto_codec) {
  Bytes raw{job.raw.data(), job.hole ? 0 : job.raw_size};
  auto e = encode_chunk(raw, job.hole, job.raw_size, options.codec, options.level, auto_codec,
                        job.out.body);
  PayloadMeta meta{e.codec, static_cast<std::int8_t>(e.level), e.raw_hash};
  if (e.codec == ChunkCodec::none) {
    job.out.body.swap(job.raw);
    job.out.body.resize(job.raw_size);
  } else {
    job.out.body.resize(e.stored_size);
  }
  return meta;
}

}  // namespace

Producer::Producer(const std::vector<FilePlan>& files, std::uint32_t chunk_size)
    : files_(files), chunk_size_(chunk_size) {
  for (const auto& f : files_) (small(f) ? small_total_ : large_total_) += f.source->meta.size;
  next_small_ = next_of_kind(0, true);
  next_large_ = next_of_kind(0, false);
}

bool Producer::small(const FilePlan& plan) const {
  return plan.source->meta.size <= chunk_size_ && plan.verified.empty();
}

std::size_t Producer::next_of_kind(std::size_t from, bool want_small) const {
  while (from < files_.size() && small(files_[from]) != want_small) ++from;
  return from;
}

bool Producer::operator()(SendJob& job) {
  for (;;) {
    bool small_left = next_small_ < files_.size() || !bundle_members_.empty();
    bool large_left = current_ || next_large_ < files_.size();
    if (!small_left && !large_left) return false;
    // The kind further behind goes next: done/total compared cross-multiplied (a total may be 0).
    auto progress = [](std::uint64_t a, std::uint64_t b) {
      return static_cast<double>(a) * static_cast<double>(b);
    };
    bool small_turn = small_left && (!large_left || progress(small_done_, large_total_) <=
                                                        progress(large_done_, small_total_));
    if (small_turn ? small_step(job) : large_step(job)) return true;
  }
}

bool Producer::small_step(SendJob& job) {
  for (;;) {
    if (next_small_ == files_.size()) {
      if (bundle_members_.empty()) return false;
      take_bundle(job);
      return true;
    }
    const auto& plan = files_[next_small_];
    auto size = plan.source->meta.size;
    if (!bundle_members_.empty() &&
        (bundle_raw_.size() + size > chunk_size_ || bundle_members_.size() == kMaxBundleMembers)) {
      take_bundle(job);  // this file opens the next one
      return true;
    }
    add_to_bundle(plan);
    small_done_ += size;
    next_small_ = next_of_kind(next_small_ + 1, true);
  }
}

bool Producer::large_step(SendJob& job) {
  if (!current_) {
    if (next_large_ == files_.size()) return false;
    current_ = &files_[next_large_];
    next_large_ = next_of_kind(next_large_ + 1, false);
    file_.open(current_->source->source_path);
    k_ = 0;
    range_ = 0;
  }
  return large_file_step(job);
}

bool Producer::large_file_step(SendJob& job) {
  const auto& plan = *current_;
  const auto& meta = plan.source->meta;
  auto chunks = format::chunks_for(meta.size, chunk_size_);
  if (k_ >= chunks) {
    job.kind = SendJob::Kind::file_end;
    job.entry = plan.entry;
    job.hash = file_.digest();
    file_.close();
    current_ = nullptr;
    return true;
  }
  auto k = k_++;
  auto n = static_cast<std::uint32_t>(format::chunk_bytes(meta.size, chunk_size_, k));
  large_done_ += n;
  auto offset = k * chunk_size_;
  // A chunk wholly inside a hole of a sparse file is zeros: not read.
  const bool hole = file_.read(offset, n, job.raw);
  while (range_ < plan.verified.size() &&
         plan.verified[range_].first + plan.verified[range_].second <= k)
    ++range_;
  if (range_ < plan.verified.size() && plan.verified[range_].first <= k) return false;
  job.kind = SendJob::Kind::chunk;
  job.entry = plan.entry;
  job.index = k;
  job.raw_size = n;
  job.copied = 0;  // the slot may have held a bundle
  job.hole = hole;
  return true;
}

std::size_t Producer::HashKey::operator()(const Hash128& h) const noexcept {
  std::size_t k;
  std::memcpy(&k, h.bytes.data(), sizeof k);
  return k;
}

void Producer::add_to_bundle(const FilePlan& plan) {
  auto size = plan.source->meta.size;
  auto at = bundle_raw_.size();
  bundle_raw_.reserve(chunk_size_);
  bundle_raw_.resize(at + size);
  MutableBytes content{bundle_raw_.data() + at, size};
  if (size > 0) {
    auto fd = open_read(plan.source->source_path);
    fd.pread_exact(content, 0, "'" + plan.source->source_path + "' (changed while sent?)");
  }
  BundleMember member{plan.entry, hash128(content), kNoSource};
  if (size > 0) {
    if (auto it = carried_.find(member.hash); it != carried_.end()) {
      member.source = it->second;
      bundle_raw_.resize(at);
      bundle_copied_ += size;
    } else if (carried_.size() < kMaxCarried) {
      carried_.emplace(member.hash, plan.entry);
    }
  }
  bundle_members_.push_back(member);
}

void Producer::take_bundle(SendJob& job) {
  job.kind = SendJob::Kind::bundle;
  job.raw_size = static_cast<std::uint32_t>(bundle_raw_.size());
  job.hole = false;
  job.copied = bundle_copied_;
  bundle_copied_ = 0;
  job.raw.swap(bundle_raw_);
  job.members.swap(bundle_members_);
  // The job's previous buffers become the next bundle's, their capacity kept.
  bundle_raw_.clear();
  bundle_members_.clear();
}

void encode_job(SendJob& job, const nubo::net::SendOptions& options, AutoCodec* auto_codec) {
  job.out.head.clear();
  job.out.body.clear();
  if (job.kind == SendJob::Kind::file_end) {
    job.out.head = frame(MsgType::file_end, encode_file_end({job.entry, job.hash}));
    return;
  }
  auto p = encode_payload(job, options, auto_codec);
  job.codec = p.codec;
  auto stored = static_cast<std::uint32_t>(job.out.body.size());
  std::vector<std::byte> meta;
  MsgType type;
  if (job.kind == SendJob::Kind::chunk) {
    auto m = encode_chunk_meta(
        {job.entry, job.index, p.codec, p.level, job.raw_size, p.raw_hash, stored});
    meta.assign(m.begin(), m.end());
    type = MsgType::chunk;
  } else {
    BundleMeta b;
    b.codec = p.codec;
    b.level = p.level;
    b.raw_size = job.raw_size;
    b.raw_hash = p.raw_hash;
    b.stored_size = stored;
    b.members.swap(job.members);
    meta = encode_bundle_head(b);
    job.members.swap(b.members);
    type = MsgType::bundle;
  }
  auto h = encode_frame_header(type, static_cast<std::uint32_t>(meta.size()) + stored);
  job.out.head.assign(h.begin(), h.end());
  append(job.out.head, meta);
}

}  // namespace nubo::transfer::net
