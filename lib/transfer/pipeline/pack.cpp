// nubo::transfer::pack: sources -> archive. The archive is a Sink (sink.hpp): the shared source
// reads and encodes; this file writes records in order and takes checkpoints between two jobs
// where its target (pack_target.hpp) asks: a local file with its journal, which a killed pack
// resumes (pack_resume.hpp), stdout in one pass ("-"), or an object (pack_object.hpp).
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>

#include "common/log.hpp"
#include "nubo/error.hpp"
#include "nubo/transfer.hpp"
#include "transfer/archive/archive_writer.hpp"
#include "transfer/file_io.hpp"
#include "transfer/journal.hpp"
#include "transfer/pipeline/auto_codec.hpp"
#include "transfer/pipeline/options.hpp"
#include "transfer/pipeline/pack_object.hpp"
#include "transfer/pipeline/pack_resume.hpp"
#include "transfer/pipeline/pack_target.hpp"
#include "transfer/pipeline/progress.hpp"
#include "transfer/pipeline/sink.hpp"
#include "transfer/pipeline/summary.hpp"
#include "transfer/pipeline/walk.hpp"

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

// A pack writes "<archive>.part", and its progress in "<archive>.journal".
constexpr const char* kPartSuffix = ".part";
constexpr const char* kJournalSuffix = ".journal";

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

// A pack's progress, kept in "<archive>.journal" beside "<archive>.part": a checkpoint after
// every 64 MiB of archive or a sixteenth of the content (fdatasync, then a journal record); a
// rerun reads the partial archive back (pack_resume.hpp).
class FileTarget : public PackTarget {
 public:
  FileTarget(const std::vector<std::string>& sources, std::string archive,
             const PackOptions& options)
      : sources_(sources), archive_(std::move(archive)), options_(options) {}

  Start start(const WalkResult& walk, std::uint32_t chunk_size, const KeySource& keys) override {
    interval_ = checkpoint_interval(walk.bytes, chunk_size);
    journal_.emplace(Journal::open(journal_path(), pack_identity(sources_, options_)));
    auto part = open_write(part_path());
    PackResume resume;
    if (options_.resume && !journal_->discarded_other())
      resume = scan_partial(part, *journal_, walk.entries, chunk_size, keys);
    if (resume.fresh || resume.index.entries.empty()) {
      journal_->reset();  // checkpoints of an earlier attempt say nothing about this one
      return {ArchiveWriter::create(std::move(part), chunk_size, fresh_encryption(keys)), {}};
    }
    log::info("resuming " + part_path() + " at " + std::to_string(resume.offset) + " bytes, " +
              std::to_string(resume.skipped_bytes) + " bytes already packed");
    last_offset_ = resume.offset;
    auto writer = ArchiveWriter::resume(std::move(part), chunk_size, resume.offset,
                                        std::move(resume.index), std::move(resume.cipher));
    return {std::move(writer), std::move(resume)};
  }

  bool due(std::uint64_t offset, std::uint64_t content_bytes) const override {
    return offset - last_offset_ >= kCheckpointBytes || content_bytes >= interval_;
  }

  // The records are made durable before the journal says so.
  void checkpoint(ArchiveWriter& writer, const PackCheckpoint& c) override {
    last_offset_ = c.archive_offset;
    if (options_.sync) writer.output().sync();
    journal_->append(kPackCheckpoint, encode_checkpoint(c));
    journal_->commit(options_.sync);
  }

  void finish(ArchiveWriter& writer, Summary&) override {
    if (options_.sync) writer.output().sync();
    writer.output().close();
    rename_file(part_path(), archive_);
    if (options_.sync) sync_parent_dir(archive_);
    journal_->remove();
  }

  void forget_earlier() override {
    std::error_code ec;
    std::filesystem::remove(part_path(), ec);
    std::filesystem::remove(journal_path(), ec);
  }

 private:
  std::string part_path() const { return archive_ + kPartSuffix; }
  std::string journal_path() const { return archive_ + kJournalSuffix; }

  const std::vector<std::string>& sources_;
  std::string archive_;
  const PackOptions& options_;
  std::optional<Journal> journal_;
  std::uint64_t interval_ = 0, last_offset_ = 0;
};

// pack -o -: the archive on stdout, in one pass; nothing can resume it.
class StreamTarget : public PackTarget {
 public:
  Start start(const WalkResult&, std::uint32_t chunk_size, const KeySource& keys) override {
    const int fd = ::dup(STDOUT_FILENO);
    if (fd < 0) throw_io("duplicate", "stdout", errno);
    return {ArchiveWriter::create(std::make_unique<FdOutput>(Fd(fd, "stdout")), chunk_size,
                                  fresh_encryption(keys)),
            {}};
  }
  // Records reach the pipe at least every 64 MiB: a reader downstream is not kept waiting.
  bool due(std::uint64_t offset, std::uint64_t) const override {
    return offset - last_offset_ >= kCheckpointBytes;
  }
  void checkpoint(ArchiveWriter&, const PackCheckpoint& c) override {
    last_offset_ = c.archive_offset;
  }
  void finish(ArchiveWriter& writer, Summary&) override { writer.output().close(); }

 private:
  std::uint64_t last_offset_ = 0;
};

// The archive as a sink: records written in order by an ArchiveWriter that the target gives,
// with a checkpoint (where the target asks for one) between two jobs.
class ArchiveSink : public Sink {
 public:
  ArchiveSink(PackTarget& target, const PackOptions& options, AutoCodec* auto_codec)
      : target_(target),
        options_(options),
        auto_(auto_codec),
        chunk_size_(static_cast<std::uint32_t>(options.chunk_size)),
        keys_(KeySource::parse(options.key_file)) {}

  const Summary& summary() const { return summary_; }

  std::vector<FilePlan> plan(const WalkResult& walk) override {
    walk_ = &walk;
    auto start = target_.start(walk, chunk_size_, keys_);
    writer_.emplace(std::move(start.writer));
    const auto& resume = start.resume;
    if (!resume.fresh) resume_from(resume, walk);
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
    if (target_.due(writer_->offset(), logical_since_)) checkpoint();
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
    target_.finish(*writer_, summary_);
  }

  void abort(bool cancelled) noexcept override {
    // A cancelled pack keeps its work when it stopped between two jobs.
    if (cancelled && consistent_ && writer_) {
      try {
        checkpoint();
      } catch (const Error& e) {
        log::warn(std::string("keeping a cancelled pack's progress: ") + e.what());
      }
    }
    target_.abort(cancelled);
  }

 private:
  void resume_from(const PackResume& resume, const WalkResult& walk) {
    summary_.resumed = true;
    summary_.bytes_skipped = resume.skipped_bytes;
    for (const auto& e : writer_->index().entries) count_entry(summary_, e.meta.kind);
    for (const auto& c : writer_->index().chunks) count_chunk(summary_, c.codec);
    // Content bytes count when a file's end record is written; the open file's come later.
    for (std::size_t i = 0; i < resume.next_entry; ++i) summary_.bytes += walk.entries[i].meta.size;
  }

  // Between two jobs: the target keeps what was written so far.
  void checkpoint() {
    writer_->flush();
    logical_since_ = 0;
    PackCheckpoint c;
    c.archive_offset = writer_->offset();
    c.entries = writer_->index().entries.size();
    c.open = open_;
    if (open_) {
      c.open_chunks = writer_->index().entries.back().chunk_count;
      c.hash_state = hasher_.save();
    }
    target_.checkpoint(*writer_, c);
  }

  PackTarget& target_;
  const PackOptions& options_;
  AutoCodec* auto_;
  std::uint32_t chunk_size_;
  KeySource keys_;  // encrypting when they do
  const WalkResult* walk_ = nullptr;
  std::optional<ArchiveWriter> writer_;
  std::optional<ProgressTracker> progress_;
  Summary summary_;
  std::uint32_t entry_ = 0;
  bool open_ = false;  // a file's entry record is written, its end record not yet
  FileHasher hasher_;  // that file's hash after its last chunk written
  std::vector<format::EntryMeta> members_;  // the bundle being written (kept for its capacity)
  std::vector<Hash128> hashes_;
  std::uint64_t logical_since_ = 0;
  bool consistent_ = true;
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

Summary run_pack(const std::vector<std::string>& sources, const std::string& archive,
                 const PackOptions& options, PackTarget& target,
                 const std::vector<std::string>& companions) {
  if (options.skip_unchanged) {
    if (auto done = unchanged(archive, sources, options)) {
      target.forget_earlier();
      return *done;
    }
  }
  auto started = Clock::now();
  std::optional<AutoCodec> auto_codec;
  auto encoding = pack_encoding(options, auto_codec);
  ArchiveSink sink(target, options, encoding.auto_codec);
  auto walk = walk_sources(sources, companions, PathFilter(options.exclude, options.include));
  run_transfer(walk, sink, static_cast<std::uint32_t>(options.chunk_size), encoding);
  Summary summary = sink.summary();
  summary.seconds = seconds_since(started);
  return summary;
}

}  // namespace

std::vector<std::string> companions_of(const std::string& archive) {
  return {archive, archive + kPartSuffix, archive + kJournalSuffix};
}

std::optional<Encryption> fresh_encryption(const KeySource& keys) {
  if (!keys.encrypts()) return std::nullopt;
  return keys.create();
}

std::string pack_identity(const std::vector<std::string>& sources, const PackOptions& options) {
  std::string identity = "nubo pack 1\nchunk " + std::to_string(options.chunk_size);
  for (const auto& s : sources) {
    identity += '\n';
    identity += absolute(s);
  }
  for (const auto& p : options.exclude) {
    identity += "\nexclude ";
    identity += p;
  }
  for (const auto& p : options.include) {
    identity += "\ninclude ";
    identity += p;
  }
  return identity;
}

Summary pack(const std::vector<std::string>& sources, const std::string& archive,
             const PackOptions& options) {
  if (archive.empty()) throw Error(Errc::invalid_argument, "no archive path given");
  if (store::is_url(archive)) {
    auto target = object_target(sources, store::parse_url(archive), options);
    return run_pack(sources, archive, options, *target, {});
  }
  if (archive == "-") {
    StreamTarget target;
    return run_pack(sources, archive, options, target, {});
  }
  FileTarget target(sources, archive, options);
  return run_pack(sources, archive, options, target, companions_of(archive));
}

}  // namespace nubo::transfer
