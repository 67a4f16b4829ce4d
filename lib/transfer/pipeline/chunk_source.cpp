#include "transfer/pipeline/chunk_source.hpp"

#include <chrono>
#include <cstring>

#include "common/log.hpp"
#include "nubo/error.hpp"

namespace nubo::transfer {
namespace {

using Clock = std::chrono::steady_clock;

// The contents remembered for references: about 64 MB of memory at most, whatever the job.
constexpr std::size_t kMaxCarried = 1 << 20;

}  // namespace

ChunkSource::ChunkSource(const std::vector<FilePlan>& files, std::uint32_t chunk_size,
                         SourceOptions options, AutoCodec* auto_codec)
    : files_(files), chunk_size_(chunk_size), options_(options), auto_(auto_codec) {
  for (const auto& f : files_) {
    if (f.first_chunk > 0 && !f.prefix_hash)
      throw Error(Errc::internal, "a plan skips chunks of '" + f.source->meta.path +
                                      "' without the hash of what it skips");
    if (f.source->meta.kind == format::EntryKind::file)
      (small(f) ? small_total_ : large_total_) += f.source->meta.size;
  }
  next_small_ = next_of_kind(0, true);
  next_large_ = next_of_kind(0, false);
}

bool ChunkSource::small(const FilePlan& plan) const {
  const auto& meta = plan.source->meta;
  if (options_.bundle_members == 0 || !plan.verified.empty() || plan.first_chunk > 0 ||
      plan.record_written)
    return false;
  if (options_.archive_bundles) return format::bundled_in_archive(meta, chunk_size_);
  return meta.kind == format::EntryKind::file && meta.size <= chunk_size_;
}

std::size_t ChunkSource::next_of_kind(std::size_t from, bool want_small) const {
  while (from < files_.size() && small(files_[from]) != want_small) ++from;
  return from;
}

bool ChunkSource::operator()(SourceJob& job) {
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
    // In plan order: the open bundle is taken before the large entry that follows it.
    if (options_.archive_bundles)
      small_turn = !current_ && (!bundle_members_.empty() || next_small_ < next_large_);
    if (small_turn ? small_step(job) : large_step(job)) return true;
  }
}

bool ChunkSource::small_step(SourceJob& job) {
  // Archive bundles stop at the next large entry; others take every small file.
  const auto end = options_.archive_bundles ? next_large_ : files_.size();
  for (;;) {
    if (next_small_ >= end) {
      if (bundle_members_.empty()) return false;
      take_bundle(job);
      return true;
    }
    const auto& plan = files_[next_small_];
    auto size = plan.source->meta.size;
    auto added =
        options_.archive_bundles ? size + format::encoded_entry_size(plan.source->meta) : size;
    if (!bundle_members_.empty() &&
        (bundle_raw_.size() + bundle_table_.size() + added > chunk_size_ ||
         bundle_members_.size() == options_.bundle_members)) {
      take_bundle(job);  // this file opens the next one
      return true;
    }
    add_to_bundle(plan);
    small_done_ += size;
    next_small_ = next_of_kind(next_small_ + 1, true);
  }
}

bool ChunkSource::large_step(SourceJob& job) {
  if (!current_) {
    if (next_large_ == files_.size()) return false;
    current_ = &files_[next_large_];
    next_large_ = next_of_kind(next_large_ + 1, false);
    record_due_ = options_.entry_records && !current_->record_written;
    k_ = current_->first_chunk;
    range_ = 0;
    if (current_->source->meta.kind == format::EntryKind::file)
      file_.open(current_->source->source_path,
                 current_->prefix_hash ? *current_->prefix_hash : FileHasher{});
  }
  const bool is_file = current_->source->meta.kind == format::EntryKind::file;
  if (record_due_) {
    record_due_ = false;
    job.kind = SourceJob::Kind::entry;
    job.entry = current_->entry;
    if (!is_file) current_ = nullptr;
    return true;
  }
  if (!is_file) {  // a directory or link whose record is there already: nothing to read
    current_ = nullptr;
    return false;
  }
  return large_file_step(job);
}

bool ChunkSource::large_file_step(SourceJob& job) {
  const auto& plan = *current_;
  const auto& meta = plan.source->meta;
  auto chunks = format::chunks_for(meta.size, chunk_size_);
  if (k_ >= chunks) {
    job.kind = SourceJob::Kind::file_end;
    job.entry = plan.entry;
    job.hash = file_.digest();
    warn_if_changed(plan);
    file_.close();
    current_ = nullptr;
    return true;
  }
  auto k = k_++;
  auto n = static_cast<std::uint32_t>(format::chunk_bytes(meta.size, chunk_size_, k));
  large_done_ += n;
  const auto t0 = Clock::now();
  const bool hole = file_.read(k * chunk_size_, n, job.raw);
  if (auto_ && !hole)
    auto_->observe_input(n, std::chrono::duration<double>(Clock::now() - t0).count());
  while (range_ < plan.verified.size() &&
         plan.verified[range_].first + plan.verified[range_].second <= k)
    ++range_;
  if (range_ < plan.verified.size() && plan.verified[range_].first <= k) return false;
  job.kind = SourceJob::Kind::chunk;
  job.entry = plan.entry;
  job.index = k;
  job.raw_size = n;
  job.copied = 0;  // the slot may have held a bundle
  job.hole = hole;
  if (options_.hash_snapshots) job.hash_state = file_.hasher();
  return true;
}

void ChunkSource::warn_if_changed(const FilePlan& plan) const {
  const auto st = file_.fd().stat();
  const auto& meta = plan.source->meta;
  if (static_cast<std::uint64_t>(st.st_size) != meta.size || mtime_ns(st) != meta.mtime_ns)
    log::warn(plan.source->source_path +
              " changed while it was being read: the destination holds the bytes read, which "
              "may mix old and new content");
}

std::size_t ChunkSource::HashKey::operator()(const Hash128& h) const noexcept {
  std::size_t k;
  std::memcpy(&k, h.bytes.data(), sizeof k);
  return k;
}

void ChunkSource::add_to_bundle(const FilePlan& plan) {
  auto size = plan.source->meta.size;
  auto at = bundle_raw_.size();
  bundle_raw_.reserve(chunk_size_);
  bundle_raw_.resize(at + size);
  MutableBytes content{bundle_raw_.data() + at, size};
  if (size > 0) {
    auto fd = open_read(plan.source->source_path);
    fd.pread_exact(content, 0, "'" + plan.source->source_path + "' (changed while read?)");
  }
  BundleMember member{plan.entry, hash128(content), kNoSource};
  if (options_.archive_bundles) {
    ByteWriter w(bundle_table_);
    format::encode_entry_to(w, plan.source->meta);
  } else if (size > 0) {
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

void ChunkSource::take_bundle(SourceJob& job) {
  job.kind = SourceJob::Kind::bundle;
  job.table_offset = static_cast<std::uint32_t>(bundle_raw_.size());
  append(bundle_raw_, bundle_table_);
  bundle_table_.clear();
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

void encode(SourceJob& job, Codec codec, int level, AutoCodec* auto_codec) {
  if (job.kind != SourceJob::Kind::chunk && job.kind != SourceJob::Kind::bundle) return;
  Bytes raw{job.raw.data(), job.hole ? 0 : job.raw_size};
  job.encoded = encode_chunk(raw, job.hole, job.raw_size, codec, level, auto_codec, job.stored);
}

}  // namespace nubo::transfer
