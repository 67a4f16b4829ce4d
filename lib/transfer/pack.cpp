// nubo::transfer::pack: sources -> archive. The archive is a Sink (sink.hpp): the shared source
// reads and encodes; this file writes records in order, and checkpoints the journal so that a
// killed pack resumes (pack_resume.hpp). "-" writes a stream to stdout instead, in one pass.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <optional>

#include "common/log.hpp"
#include "nubo/error.hpp"
#include "nubo/transfer.hpp"
#include "transfer/archive_writer.hpp"
#include "transfer/auto_codec.hpp"
#include "transfer/file_io.hpp"
#include "transfer/journal.hpp"
#include "transfer/options.hpp"
#include "transfer/pack_resume.hpp"
#include "transfer/progress.hpp"
#include "transfer/s3/copy.hpp"
#include "transfer/s3/streaming_upload.hpp"
#include "transfer/sink.hpp"
#include "transfer/summary.hpp"
#include "transfer/walk.hpp"

namespace nubo::transfer {
namespace {

using Clock = std::chrono::steady_clock;
using format::EntryKind;

// A checkpoint (fdatasync, then a journal record) after this much archive output, or after a
// sixteenth of the job's content (at least 4 chunks, at most 1 GiB; zero chunks write almost
// nothing): what a crash can cost stays small next to the job, and so does the fsync count.
constexpr std::uint64_t kCheckpointBytes = 64 << 20;
std::uint64_t checkpoint_interval(std::uint64_t total, std::uint64_t chunk_size) {
  return std::clamp<std::uint64_t>(total / 16, 4 * chunk_size, 1ull << 30);
}

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

std::string absolute(const std::string& path) {
  if (!path.empty() && path[0] == '/') return path;
  char* cwd = ::getcwd(nullptr, 0);
  if (!cwd) return path;
  std::string out = cwd;
  out += '/';
  out += path;
  std::free(cwd);
  return out;
}

// The archive as a sink: a file written as "<archive>.part" with its journal and renamed into
// place at the end, or (archive "-") a stream on stdout that nothing can resume.
class ArchiveSink : public Sink {
 public:
  ArchiveSink(const std::vector<std::string>& sources, std::string archive,
              const PackOptions& options, AutoCodec* auto_codec)
      : sources_(sources),
        archive_(std::move(archive)),
        options_(options),
        auto_(auto_codec),
        chunk_size_(static_cast<std::uint32_t>(options.chunk_size)),
        key_(key_from_file(options.key_file)) {}

  bool streaming() const { return archive_ == "-"; }
  // Files the walk must leave out: the archive and its companions, when inside a source.
  std::vector<std::string> companions() const {
    if (streaming()) return {};
    return {archive_, part_path(), journal_path()};
  }
  const Summary& summary() const { return summary_; }
  // Told, after each checkpoint, up to where the archive file will not change again, and the
  // file (an upload that follows it, for pack -o s3://..., reads it through that descriptor,
  // which follows the rename at the end), with a checkpoint at least every `bytes` of archive
  // output: the upload trails the pack by about that much.
  void on_durable(std::function<void(std::uint64_t, const Fd&)> f, std::uint64_t bytes) {
    on_durable_ = std::move(f);
    checkpoint_bytes_ = std::min(checkpoint_bytes_, bytes);
  }

  std::vector<FilePlan> plan(const WalkResult& walk) override {
    walk_ = &walk;
    PackResume resume;
    if (streaming()) {
      const int fd = ::dup(STDOUT_FILENO);
      if (fd < 0) throw_io("duplicate", "stdout", errno);
      writer_.emplace(ArchiveWriter::stream(Fd(fd, "stdout"), chunk_size_, encryption()));
    } else {
      open_journal();
      auto part = open_write(part_path());
      if (options_.resume && !journal_->discarded_other())
        resume = scan_partial(part, *journal_, walk.entries, chunk_size_, key_ ? &*key_ : nullptr);
      if (resume.fresh || resume.index.entries.empty()) {
        writer_.emplace(ArchiveWriter::create(std::move(part), chunk_size_, encryption()));
        resume = PackResume{};
        journal_->reset();  // checkpoints of an earlier attempt say nothing about this one
      } else {
        resume_from(resume, walk);
        writer_.emplace(ArchiveWriter::resume(std::move(part), chunk_size_, resume.offset,
                                              std::move(resume.index), std::move(resume.cipher)));
      }
    }
    interval_ = checkpoint_interval(walk.bytes, chunk_size_);
    last_offset_ = writer_->offset();
    progress_.emplace(options_.progress, walk.bytes, walk.entries.size());
    progress_->add_skipped(resume.skipped_bytes);
    for (std::size_t i = 0; i < resume.next_entry; ++i) progress_->file_done();
    progress_->report(true);

    std::vector<FilePlan> plans;
    for (auto i = resume.next_entry; i < walk.entries.size(); ++i) {
      FilePlan p;
      p.entry = static_cast<std::uint32_t>(i);
      p.source = &walk.entries[i];
      if (resume.open && i == resume.next_entry) {  // continued mid-file
        p.record_written = true;
        p.first_chunk = resume.next_chunk;
        p.prefix_hash = resume.hasher;
        entry_ = static_cast<std::uint32_t>(writer_->index().entries.size() - 1);
        hasher_ = resume.hasher;
        open_ = true;
      }
      plans.push_back(std::move(p));
    }
    return plans;
  }

  SourceOptions source_options() const override {
    SourceOptions o;
    o.entry_records = true;
    o.hash_snapshots = true;
    o.bundle_members = UINT32_MAX;  // bounded by the chunk size alone
    o.archive_bundles = true;
    return o;
  }

  void put(SourceJob& job) override {
    consistent_ = false;
    const auto& meta = walk_->entries[job.entry].meta;
    switch (job.kind) {
      case SourceJob::Kind::entry:
        entry_ = writer_->add_entry(meta);
        progress_->set_current(meta.path);
        count_entry(summary_, meta.kind);
        if (meta.kind == EntryKind::file) {
          hasher_.reset();  // a checkpoint before its first chunk saves the empty state
          open_ = true;
        } else {
          progress_->file_done();
        }
        break;
      case SourceJob::Kind::chunk: {
        const auto& e = job.encoded;
        Bytes payload = e.codec == ChunkCodec::none ? Bytes{job.raw.data(), job.raw_size}
                                                    : Bytes{job.stored.data(), e.stored_size};
        auto t0 = Clock::now();
        writer_->add_chunk(entry_, job.index * chunk_size_, e.codec, e.level, job.raw_size,
                           e.raw_hash, payload);
        if (auto_) auto_->observe_output(payload.size(), seconds_since(t0));
        hasher_ = job.hash_state;
        count_chunk(summary_, e.codec);
        progress_->add_done(job.raw_size);
        progress_->add_written(format::kRecordHeaderSize + payload.size());
        logical_since_ += job.raw_size;
        break;
      }
      case SourceJob::Kind::file_end:
        writer_->end_file(entry_, job.hash);
        open_ = false;
        summary_.bytes += meta.size;
        progress_->file_done();
        break;
      case SourceJob::Kind::bundle:
        put_bundle(job);
        break;
    }
    consistent_ = true;
    if (writer_->offset() - last_offset_ >= checkpoint_bytes_ || logical_since_ >= interval_)
      checkpoint();
    progress_->report();
  }

  void put_bundle(const SourceJob& job) {
    const auto& e = job.encoded;
    Bytes payload = e.codec == ChunkCodec::none ? Bytes{job.raw.data(), job.raw_size}
                                                : Bytes{job.stored.data(), e.stored_size};
    members_.clear();
    hashes_.clear();
    for (const auto& m : job.members) {
      const auto& meta = walk_->entries[m.entry].meta;
      members_.push_back(meta);
      hashes_.push_back(m.hash);
      count_entry(summary_, meta.kind);
      summary_.bytes += meta.size;
      progress_->file_done();
    }
    auto t0 = Clock::now();
    writer_->add_bundle(members_, hashes_, e.codec, e.level, job.raw_size, job.table_offset,
                        e.raw_hash, payload);
    if (auto_) auto_->observe_output(payload.size(), seconds_since(t0));
    count_chunk(summary_, e.codec);
    progress_->set_current(members_.back().path);
    progress_->add_done(job.table_offset);  // the members' content
    progress_->add_written(format::kRecordHeaderSize + payload.size());
    logical_since_ += job.raw_size;
  }

  void finish() override {
    summary_.bytes_stored = writer_->finish();
    progress_->finish();
    if (streaming()) {
      writer_->close();
      return;
    }
    if (options_.sync) writer_->fd().datasync();
    writer_->close();
    rename_file(part_path(), archive_);
    if (options_.sync) sync_parent_dir(archive_);
    journal_->remove();
  }

  void abort(bool cancelled) noexcept override {
    // A cancelled pack keeps its work when it stopped between two jobs.
    if (!cancelled || !consistent_ || !writer_) return;
    try {
      checkpoint();
    } catch (const Error& e) {
      log::warn(std::string("keeping a cancelled pack's progress: ") + e.what());
    }
  }

 private:
  // A fresh data key for a new archive, when encrypting.
  std::optional<Encryption> encryption() const {
    if (!key_) return std::nullopt;
    auto [cipher, block] = ArchiveCipher::create(*key_);
    return Encryption{std::move(cipher), block};
  }
  std::string part_path() const { return archive_ + ".part"; }
  std::string journal_path() const { return archive_ + ".journal"; }

  // The job's identity: the same sources and filters into the same archive with the same chunk
  // size. The codec may differ between attempts: each chunk records its own.
  void open_journal() {
    std::string identity = "nubo pack 1\nchunk " + std::to_string(chunk_size_);
    for (const auto& s : sources_) {
      identity += '\n';
      identity += absolute(s);
    }
    for (const auto& p : options_.exclude) {
      identity += "\nexclude ";
      identity += p;
    }
    for (const auto& p : options_.include) {
      identity += "\ninclude ";
      identity += p;
    }
    journal_.emplace(Journal::open(journal_path(), identity));
  }

  void resume_from(const PackResume& resume, const WalkResult& walk) {
    summary_.resumed = true;
    summary_.bytes_skipped = resume.skipped_bytes;
    for (const auto& e : resume.index.entries) count_entry(summary_, e.meta.kind);
    for (const auto& c : resume.index.chunks) count_chunk(summary_, c.codec);
    // Content bytes count when a file's end record is written; the open file's come later.
    for (std::size_t i = 0; i < resume.next_entry; ++i) summary_.bytes += walk.entries[i].meta.size;
    log::info("resuming " + part_path() + " at " + std::to_string(resume.offset) + " bytes, " +
              std::to_string(resume.skipped_bytes) + " bytes already packed");
  }

  // Records that everything written so far is durable. Only at a job boundary; a stream only
  // flushes (nothing can resume it).
  void checkpoint() {
    writer_->flush();
    last_offset_ = writer_->offset();
    logical_since_ = 0;
    if (!journal_) return;
    if (options_.sync) writer_->fd().datasync();
    PackCheckpoint c;
    c.archive_offset = writer_->offset();
    c.entries = writer_->index().entries.size();
    c.open = open_;
    if (open_) {
      c.open_chunks = writer_->index().entries.back().chunk_count;
      c.hash_state = hasher_.save();
    }
    journal_->append(kPackCheckpoint, encode_checkpoint(c));
    journal_->commit(options_.sync);
    if (on_durable_) on_durable_(c.archive_offset, writer_->fd());
  }

  const std::vector<std::string>& sources_;
  std::string archive_;
  const PackOptions& options_;
  AutoCodec* auto_;
  std::uint32_t chunk_size_;
  std::optional<Key> key_;  // encrypting
  const WalkResult* walk_ = nullptr;
  std::optional<Journal> journal_;
  std::optional<ArchiveWriter> writer_;
  std::optional<ProgressTracker> progress_;
  Summary summary_;
  std::uint32_t entry_ = 0;
  bool open_ = false;  // a file's entry record is written, its end record not yet
  FileHasher hasher_;  // that file's hash after its last chunk written
  std::vector<format::EntryMeta> members_;  // the bundle being written (kept for its capacity)
  std::vector<Hash128> hashes_;
  std::uint64_t interval_ = 0, last_offset_ = 0, logical_since_ = 0;
  std::uint64_t checkpoint_bytes_ = kCheckpointBytes;
  bool consistent_ = true;
  std::function<void(std::uint64_t, const Fd&)> on_durable_;
};

// The encoding of a pack, its codec checked; `auto_codec` holds AutoCodec when chosen.
Encoding pack_encoding(const PackOptions& options, std::optional<AutoCodec>& auto_codec) {
  check_chunk_size(options.chunk_size);
  Encoding encoding;
  encoding.codec = options.codec;
  encoding.level = options.level;
  encoding.resources = plan_resources(options.threads, options.memory_limit, options.chunk_size);
  if (options.codec == Codec::automatic) {
    if (options.target_rate < 0) {
      throw Error(Errc::invalid_argument, "target rate must be positive (or 0: measure it)");
    }
    auto_codec.emplace(static_cast<int>(encoding.resources.workers), auto_max_level(options.level),
                       options.target_rate);
    encoding.auto_codec = encoding.read_meter = &*auto_codec;
  } else {
    fixed_setting(options.codec, options.level);  // checks the level
  }
  return encoding;
}

// pack -o s3://BUCKET/KEY: the archive is made in a staging file of the cache (resumable as any
// pack), and each part of it goes up as soon as a checkpoint makes it final, so that packing and
// uploading overlap; the object appears when the last part is in.
Summary pack_to_object(const std::vector<std::string>& sources, const std::string& archive,
                       const PackOptions& options) {
  auto started = Clock::now();
  const auto url = s3::parse_s3_url(archive);
  if (url.key.empty() || url.key.back() == '/')
    throw Error(Errc::invalid_argument, archive + " names no object: give the archive's key");
  std::optional<AutoCodec> auto_codec;
  auto encoding = pack_encoding(options, auto_codec);
  const auto staging = s3::cache_dir("") + "/pack-" + hex64(hash64(as_bytes(archive))) + ".nubo";
  ArchiveSink sink(sources, staging, options, encoding.auto_codec);
  auto walk = walk_sources(sources, {}, PathFilter(options.exclude, options.include));
  // Parts are sized before the archive's size is known: its content, stored raw at worst, and
  // a generous allowance for the records of many small files.
  const auto estimate = walk.bytes + 512 * walk.entries.size() + (1 << 20);
  const auto part = s3::part_size_for(estimate);
  s3::StreamingUpload upload(s3::Client(s3::load_config()), url, staging + ".part", part,
                             staging + ".upload.journal",
                             "nubo pack upload 1\n" + archive + "\n" + std::to_string(part));
  // A checkpoint every part: a part goes up as soon as it is whole, and an interrupted pack
  // has at most about a part written and not yet uploaded.
  sink.on_durable([&](std::uint64_t offset, const Fd& file) { upload.durable(offset, file); },
                  part);
  try {
    run_transfer(walk, sink, static_cast<std::uint32_t>(options.chunk_size), encoding);
  } catch (...) {
    upload.stop(false);  // what is up stays up: the same pack resumes
    throw;
  }
  Summary summary = sink.summary();
  upload.finish(summary.bytes_stored, staging);
  summary.bytes_transferred = upload.bytes_sent();
  remove_file(staging);
  summary.seconds = seconds_since(started);
  return summary;
}

}  // namespace

Summary pack(const std::vector<std::string>& sources, const std::string& archive,
             const PackOptions& options) {
  auto started = Clock::now();
  if (archive.empty()) throw Error(Errc::invalid_argument, "no archive path given");
  if (s3::is_s3_url(archive)) return pack_to_object(sources, archive, options);
  auto chunk_size = static_cast<std::uint32_t>(options.chunk_size);
  std::optional<AutoCodec> auto_codec;
  auto encoding = pack_encoding(options, auto_codec);
  ArchiveSink sink(sources, archive, options, encoding.auto_codec);
  auto walk =
      walk_sources(sources, sink.companions(), PathFilter(options.exclude, options.include));
  run_transfer(walk, sink, chunk_size, encoding);
  Summary summary = sink.summary();
  summary.seconds = seconds_since(started);
  return summary;
}

}  // namespace nubo::transfer
