// nubo::transfer::pack: sources -> archive, on the pipeline. The producer reads files chunk by
// chunk (holes of sparse files are found with SEEK_DATA and never read); workers hash and
// compress; the consumer writes records in order, hashes each file's content, and checkpoints
// the journal so that a killed pack resumes (pack_resume.hpp).
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <optional>

#include "common/log.hpp"
#include "nubo/error.hpp"
#include "nubo/transfer.hpp"
#include "transfer/archive_writer.hpp"
#include "transfer/auto_codec.hpp"
#include "transfer/chunk_encoder.hpp"
#include "transfer/file_chunks.hpp"
#include "transfer/file_io.hpp"
#include "transfer/journal.hpp"
#include "transfer/options.hpp"
#include "transfer/pack_resume.hpp"
#include "transfer/pipeline.hpp"
#include "transfer/progress.hpp"
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

struct PackJob {
  enum class Kind { entry, chunk, end } kind = Kind::entry;
  std::size_t source = 0;    // index into the walk
  std::uint64_t offset = 0;  // chunk: where in the file
  std::uint32_t raw_size = 0;
  bool hole = false;  // chunk lies in a hole: zeros, not read
  std::vector<std::byte> raw, stored;
  std::size_t stored_size = 0;
  ChunkCodec codec = ChunkCodec::none;
  int level = 0;
  std::uint64_t raw_hash = 0;
  // The file's content hash is computed by the producer, which reads in order anyway, while the
  // bytes are still in cache: after this chunk (chunks, for checkpoints), or final (end).
  FileHasher hash_state;
  Hash128 digest;
};

// Reads the sources in order, one job per entry record, chunk and end record.
class Producer {
 public:
  Producer(const std::vector<SourceEntry>& sources, std::uint32_t chunk_size,
           const PackResume& resume, AutoCodec* auto_codec)
      : sources_(sources), chunk_size_(chunk_size), auto_(auto_codec) {
    next_ = resume.next_entry;
    if (resume.open) {
      stage_ = Stage::chunks;
      chunk_ = resume.next_chunk;
      file_.open(sources_[next_].source_path, resume.hasher);
    }
  }

  bool operator()(PackJob& job) {
    for (;;) {
      if (next_ >= sources_.size()) return false;
      const auto& s = sources_[next_];
      switch (stage_) {
        case Stage::entry:
          job.kind = PackJob::Kind::entry;
          job.source = next_;
          if (s.meta.kind == EntryKind::file) {
            stage_ = Stage::chunks;
            chunk_ = 0;
            file_.open(s.source_path);
          } else {
            ++next_;
          }
          return true;
        case Stage::chunks: {
          auto offset = chunk_ * chunk_size_;
          if (offset >= s.meta.size) {
            stage_ = Stage::end;
            continue;
          }
          job.kind = PackJob::Kind::chunk;
          job.source = next_;
          job.offset = offset;
          job.raw_size = static_cast<std::uint32_t>(
              std::min<std::uint64_t>(chunk_size_, s.meta.size - offset));
          const auto t0 = Clock::now();
          job.hole = file_.read(offset, job.raw_size, job.raw);
          if (auto_ && !job.hole) auto_->observe_input(job.raw_size, seconds_since(t0));
          job.hash_state = file_.hasher();
          ++chunk_;
          return true;
        }
        case Stage::end:
          job.kind = PackJob::Kind::end;
          job.source = next_;
          job.digest = file_.digest();
          check_unchanged();
          file_.close();
          stage_ = Stage::entry;
          ++next_;
          return true;
      }
    }
  }

 private:
  enum class Stage { entry, chunks, end };

  void check_unchanged() {
    const auto& s = sources_[next_];
    auto st = file_.fd().stat();
    if (static_cast<std::uint64_t>(st.st_size) != s.meta.size || mtime_ns(st) != s.meta.mtime_ns) {
      log::warn(s.source_path +
                " changed while it was being packed: the archive holds the "
                "bytes read, which may mix old and new content");
    }
  }

  const std::vector<SourceEntry>& sources_;
  std::uint64_t chunk_size_;
  AutoCodec* auto_;
  std::size_t next_ = 0;
  Stage stage_ = Stage::entry;
  std::uint64_t chunk_ = 0;
  FileChunks file_;
};

// Encodes chunks (chunk_encoder.hpp); run by every worker thread.
void compress_job(PackJob& job, const PackOptions& options, AutoCodec* auto_codec) {
  if (job.kind != PackJob::Kind::chunk) return;
  Bytes raw{job.raw.data(), job.hole ? 0 : job.raw_size};
  auto e = encode_chunk(raw, job.hole, job.raw_size, options.codec, options.level, auto_codec,
                        job.stored);
  job.codec = e.codec;
  job.level = e.level;
  job.raw_hash = e.raw_hash;
  job.stored_size = e.stored_size;
}

// Writes jobs into the archive in order; owns the file hash and the checkpoints.
class Consumer {
 public:
  // `journal` null: a stream, where checkpoints only flush (nothing can resume it).
  Consumer(ArchiveWriter& writer, Journal* journal, const std::vector<SourceEntry>& sources,
           ProgressTracker& progress, Summary& summary, AutoCodec* auto_codec, bool sync,
           PackResume& resume, std::uint64_t interval)
      : interval_(interval),
        writer_(writer),
        journal_(journal),
        sources_(sources),
        progress_(progress),
        summary_(summary),
        auto_(auto_codec),
        sync_(sync) {
    if (resume.open) {
      entry_ = static_cast<std::uint32_t>(writer.index().entries.size() - 1);
      hasher_ = std::move(resume.hasher);
      open_ = true;
    }
    last_offset_ = writer.offset();
  }

  void operator()(PackJob& job) {
    consistent_ = false;
    const auto& s = sources_[job.source];
    switch (job.kind) {
      case PackJob::Kind::entry:
        entry_ = writer_.add_entry(s.meta);
        progress_.set_current(s.meta.path);
        count_entry(summary_, s.meta.kind);
        if (s.meta.kind == EntryKind::file) {
          hasher_.reset();  // a checkpoint before its first chunk saves the empty state
          open_ = true;
        } else {
          progress_.file_done();
        }
        break;
      case PackJob::Kind::chunk: {
        Bytes payload;
        if (job.codec == ChunkCodec::none) {
          payload = {job.raw.data(), job.raw_size};
        } else {
          payload = {job.stored.data(), job.stored_size};
        }
        auto t0 = Clock::now();
        writer_.add_chunk(entry_, job.offset, job.codec, job.level, job.raw_size, job.raw_hash,
                          payload);
        if (auto_) auto_->observe_output(payload.size(), seconds_since(t0));
        hasher_ = job.hash_state;
        count_chunk(summary_, job.codec);
        progress_.add_done(job.raw_size);
        progress_.add_written(format::kRecordHeaderSize + payload.size());
        logical_since_ += job.raw_size;
        break;
      }
      case PackJob::Kind::end:
        writer_.end_file(entry_, job.digest);
        open_ = false;
        summary_.bytes += s.meta.size;
        progress_.file_done();
        break;
    }
    consistent_ = true;
    if (writer_.offset() - last_offset_ >= kCheckpointBytes || logical_since_ >= interval_) {
      checkpoint();
    }
    progress_.report();
  }

  // Records that everything written so far is durable. Only at a job boundary (consistent()).
  void checkpoint() {
    writer_.flush();
    last_offset_ = writer_.offset();
    logical_since_ = 0;
    if (!journal_) return;
    if (sync_) writer_.fd().datasync();
    PackCheckpoint c;
    c.archive_offset = writer_.offset();
    c.entries = writer_.index().entries.size();
    c.open = open_;
    if (open_) {
      c.open_chunks = writer_.index().entries.back().chunk_count;
      c.hash_state = hasher_.save();
    }
    journal_->append(kPackCheckpoint, encode_checkpoint(c));
    journal_->commit(sync_);
  }

  bool consistent() const { return consistent_; }

 private:
  std::uint64_t interval_;
  ArchiveWriter& writer_;
  Journal* journal_;
  const std::vector<SourceEntry>& sources_;
  ProgressTracker& progress_;
  Summary& summary_;
  AutoCodec* auto_;
  bool sync_;
  std::uint32_t entry_ = 0;
  bool open_ = false;
  FileHasher hasher_;
  std::uint64_t last_offset_ = 0, logical_since_ = 0;
  bool consistent_ = true;
};

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

// Runs the pipeline from `resume` to the end of the sources into `writer`, then writes the
// index; `journal` null for a stream. Returns the archive's size.
std::uint64_t pack_into(ArchiveWriter& writer, Journal* journal, const WalkResult& walk,
                        PackResume& resume, Summary& summary, const PackOptions& options,
                        const Resources& resources, AutoCodec* auto_codec) {
  const auto chunk_size = writer.chunk_size();
  ProgressTracker progress(options.progress, walk.bytes, walk.entries.size());
  progress.add_skipped(resume.skipped_bytes);
  for (std::size_t i = 0; i < resume.next_entry; ++i) progress.file_done();
  progress.report(true);

  Producer producer(walk.entries, chunk_size, resume, auto_codec);
  Consumer consumer(writer, journal, walk.entries, progress, summary, auto_codec, options.sync,
                    resume, checkpoint_interval(walk.bytes, chunk_size));
  PipelineStages<PackJob> stages;
  stages.produce = [&](PackJob& job) { return producer(job); };
  stages.work = [&](PackJob& job) { compress_job(job, options, auto_codec); };
  stages.consume = [&](PackJob& job) { consumer(job); };
  try {
    run_pipeline(resources.slots, resources.workers, stages);
  } catch (const Error& e) {
    // A cancelled pack keeps its work: the consumer stopped between two jobs.
    if (e.code() == Errc::cancelled && consumer.consistent()) consumer.checkpoint();
    throw;
  }
  auto size = writer.finish();
  progress.finish();
  return size;
}

}  // namespace

Summary pack(const std::vector<std::string>& sources, const std::string& archive,
             const PackOptions& options) {
  auto started = Clock::now();
  if (archive.empty()) throw Error(Errc::invalid_argument, "no archive path given");
  check_chunk_size(options.chunk_size);
  auto chunk_size = static_cast<std::uint32_t>(options.chunk_size);
  auto resources = plan_resources(options.threads, options.memory_limit, chunk_size);
  std::optional<AutoCodec> auto_codec;
  if (options.codec == Codec::automatic) {
    if (options.target_rate < 0) {
      throw Error(Errc::invalid_argument, "target rate must be positive (or 0: measure it)");
    }
    auto_codec.emplace(static_cast<int>(resources.workers), auto_max_level(options.level),
                       options.target_rate);
  } else {
    fixed_setting(options.codec, options.level);  // checks the level
  }
  AutoCodec* chooser = auto_codec ? &*auto_codec : nullptr;
  const PathFilter filter(options.exclude, options.include);
  Summary summary;

  if (archive == "-") {  // to stdout, as zstd -o -: one pass, nothing to resume
    auto walk = walk_sources(sources, {}, filter);
    const int fd = ::dup(STDOUT_FILENO);
    if (fd < 0) throw_io("duplicate", "stdout", errno);
    auto writer = ArchiveWriter::stream(Fd(fd, "stdout"), chunk_size);
    PackResume none;
    summary.bytes_stored =
        pack_into(writer, nullptr, walk, none, summary, options, resources, chooser);
    writer.close();
    summary.seconds = seconds_since(started);
    return summary;
  }

  const auto part_path = archive + ".part";
  const auto journal_path = archive + ".journal";
  auto walk = walk_sources(sources, {archive, part_path, journal_path}, filter);

  // The job's identity: the same sources into the same archive with the same chunk size. The
  // codec may differ between attempts: each chunk records its own.
  std::string identity = "nubo pack 1\nchunk " + std::to_string(chunk_size);
  for (const auto& s : sources) {
    identity += '\n';
    identity += absolute(s);
  }
  for (const auto& p : options.exclude) identity += "\nexclude " + p;
  for (const auto& p : options.include) identity += "\ninclude " + p;
  auto journal = Journal::open(journal_path, identity);

  auto part = open_write(part_path);
  PackResume resume;
  if (options.resume && !journal.discarded_other()) {
    resume = scan_partial(part, journal, walk.entries, chunk_size);
  }
  std::optional<ArchiveWriter> writer;
  if (resume.fresh || resume.offset <= format::kHeaderSize) {
    writer.emplace(ArchiveWriter::create(std::move(part), chunk_size));
    resume = PackResume{};
    journal.reset();  // checkpoints of an earlier attempt say nothing about this one
  } else {
    summary.resumed = true;
    summary.bytes_skipped = resume.skipped_bytes;
    for (const auto& e : resume.index.entries) count_entry(summary, e.meta.kind);
    for (const auto& c : resume.index.chunks) count_chunk(summary, c.codec);
    // Content bytes count when a file's end record is written; the open file's come later.
    for (std::size_t i = 0; i < resume.next_entry; ++i) summary.bytes += walk.entries[i].meta.size;
    log::info("resuming " + part_path + " at " + std::to_string(resume.offset) + " bytes, " +
              std::to_string(resume.skipped_bytes) + " bytes already packed");
    writer.emplace(
        ArchiveWriter::resume(std::move(part), chunk_size, resume.offset, std::move(resume.index)));
  }

  summary.bytes_stored =
      pack_into(*writer, &journal, walk, resume, summary, options, resources, chooser);
  if (options.sync) writer->fd().datasync();
  writer->close();
  rename_file(part_path, archive);
  if (options.sync) sync_parent_dir(archive);
  journal.remove();
  summary.seconds = seconds_since(started);
  return summary;
}

}  // namespace nubo::transfer
