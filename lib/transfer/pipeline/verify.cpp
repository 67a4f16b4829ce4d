// nubo::transfer::verify: every byte of an archive checked, nothing written. The records must
// tile the data region exactly as the index says (entry, chunks, end record for each file not
// bundled, a bundle record for each bundle, with nothing between them); every record header's
// checksum, every chunk's and bundle's XXH3-64 after decoding, every bundle's entry records, and
// every file's XXH3-128 must match.
#include <chrono>

#include "nubo/error.hpp"
#include "nubo/transfer.hpp"
#include "transfer/archive/archive_reader.hpp"
#include "transfer/pipeline/options.hpp"
#include "transfer/pipeline/pipeline.hpp"
#include "transfer/pipeline/progress.hpp"
#include "transfer/pipeline/summary.hpp"

namespace nubo::transfer {
namespace {

using format::EntryKind;

struct VerifyJob {
  bool is_chunk = false;
  bool is_bundle = false;  // the bundle holding entries [entry, bundle_end)
  std::size_t bundle_end = 0;
  bool file_end = false;  // the last job of a file: its hash is compared after it
  std::size_t entry = 0;
  std::uint64_t chunk = 0;
  std::vector<std::byte> record, raw;
  Bytes data;
};

class Producer {
 public:
  explicit Producer(const ArchiveFile& a) : a_(a), ahead_(a), expected_(a.data_begin()) {}

  bool operator()(VerifyJob& job) {
    const auto& entries = a_.index().entries;
    for (;;) {
      if (entry_ >= entries.size()) {
        if (expected_ != a_.data_end()) {
          throw Error(Errc::corrupt, a_.path() + ": " + std::to_string(a_.data_end() - expected_) +
                                         " bytes at archive offset " + std::to_string(expected_) +
                                         " belong to no record");
        }
        return false;
      }
      const auto& e = entries[entry_];
      job.entry = entry_;
      job.is_chunk = job.is_bundle = job.file_end = false;
      if (e.bundled) {
        const auto& c = a_.index().chunks[e.first_chunk];
        if (c.record_offset != expected_) {
          throw Error(Errc::corrupt, a_.bundle_context(entry_) + ": the previous record ends at " +
                                         std::to_string(expected_));
        }
        job.is_bundle = true;
        job.bundle_end = a_.bundle_members(entry_).second;
        ahead_.bundle(entry_);
        a_.read_bundle(entry_, job.record);
        expected_ += job.record.size();
        entry_ = job.bundle_end;
        return true;
      }
      if (!started_) {
        check_entry_record(e);
        started_ = true;
        chunk_ = 0;
        if (e.meta.kind != EntryKind::file) {
          next_entry();
          job.file_end = false;
          return true;  // a job with nothing to do keeps the progress moving
        }
      }
      if (chunk_ < e.chunk_count) {
        const auto& c = a_.chunk(entry_, chunk_);
        if (c.record_offset != expected_) {
          throw Error(Errc::corrupt, a_.chunk_context(entry_, chunk_) +
                                         ": the index places the record at offset " +
                                         std::to_string(c.record_offset) +
                                         " but the previous "
                                         "record ends at " +
                                         std::to_string(expected_));
        }
        job.is_chunk = true;
        job.chunk = chunk_;
        ahead_.chunk(entry_, chunk_);
        a_.read_chunk(entry_, chunk_, job.record);
        expected_ += job.record.size();
        ++chunk_;
        return true;
      }
      check_end_record(e);
      job.file_end = true;
      next_entry();
      return true;
    }
  }

 private:
  void next_entry() {
    ++entry_;
    started_ = false;
  }

  void check_entry_record(const format::IndexEntry& e) {
    if (e.record_offset != expected_) {
      throw Error(Errc::corrupt,
                  a_.path() + ": " + std::string(format::entry_kind_name(e.meta.kind)) + " '" +
                      e.meta.path + "': the index places its entry record at offset " +
                      std::to_string(e.record_offset) + ", the records put it at " +
                      std::to_string(expected_));
    }
    expected_ = a_.check_entry_record(entry_);
  }

  void check_end_record(const format::IndexEntry&) {
    // The end record follows the last chunk: tiling was checked chunk by chunk.
    if (a_.end_record_offset(entry_) != expected_) {
      throw Error(Errc::corrupt,
                  a_.path() + ": end record of entry " + std::to_string(entry_) + " out of place");
    }
    expected_ = a_.check_end_record(entry_);
  }

  const ArchiveFile& a_;
  ReadAhead ahead_;
  std::uint64_t expected_;
  std::size_t entry_ = 0;
  std::uint64_t chunk_ = 0;
  bool started_ = false;
};

}  // namespace

Summary verify(const std::string& archive_path, const VerifyOptions& options) {
  auto started = std::chrono::steady_clock::now();
  auto archive = ArchiveFile::open(archive_path, KeySource::parse(options.key_file));
  auto resources = plan_resources(options.threads, options.memory_limit, archive.chunk_size());
  const auto& entries = archive.index().entries;
  std::uint64_t total = 0;
  for (const auto& e : entries) total += e.meta.size;
  ProgressTracker progress(options.progress, total, entries.size());
  progress.report(true);
  Summary summary;
  FileHasher hasher;
  std::size_t hashing = SIZE_MAX;

  Producer producer(archive);
  PipelineStages<VerifyJob> stages;
  stages.produce = [&](VerifyJob& job) { return producer(job); };
  stages.work = [&](VerifyJob& job) {
    thread_local Decompressor decompressor;
    if (job.is_chunk)
      job.data = archive.decode_chunk(job.entry, job.chunk, job.record, job.raw, decompressor);
    if (job.is_bundle)
      job.data = archive.decode_bundle(job.entry, job.record, job.raw, decompressor);
  };
  stages.consume = [&](VerifyJob& job) {
    if (job.is_bundle) {
      for (auto i = job.entry; i < job.bundle_end; ++i) {
        const auto& e = entries[i];
        progress.set_current(e.meta.path);
        count_entry(summary, e.meta.kind);
        summary.bytes += e.meta.size;
        if (e.meta.kind == format::EntryKind::file &&
            hash128(archive.bundled_content(i, job.data)) != e.hash) {
          throw Error(Errc::corrupt,
                      archive.path() + ": file '" + e.meta.path + "': content hash mismatch");
        }
        progress.add_done(e.meta.size);
        progress.file_done();
      }
      count_chunk(summary, archive.index().chunks[entries[job.entry].first_chunk].codec);
      progress.add_written(job.record.size());
      progress.report();
      return;
    }
    const auto& e = entries[job.entry];
    if (hashing != job.entry) {
      hashing = job.entry;
      hasher.reset();
      progress.set_current(e.meta.path);
      count_entry(summary, e.meta.kind);
      summary.bytes += e.meta.size;
      if (e.meta.kind != format::EntryKind::file) progress.file_done();
    }
    if (job.is_chunk) {
      const auto& c = archive.chunk(job.entry, job.chunk);
      hasher.update(job.data);
      count_chunk(summary, c.codec);
      progress.add_done(c.raw_size);
      progress.add_written(job.record.size());
    }
    if (job.file_end) {
      if (hasher.digest() != e.hash) {
        throw Error(Errc::corrupt,
                    archive.path() + ": file '" + e.meta.path + "': content hash mismatch");
      }
      progress.file_done();
    }
    progress.report();
  };
  run_pipeline(resources.slots, resources.workers, stages);
  summary.bytes_stored = archive.size();
  summary.bytes_transferred = archive.source().bytes_fetched();
  summary.network_wait_seconds = archive.source().seconds_waiting();
  summary.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  progress.finish();
  return summary;
}

}  // namespace nubo::transfer
