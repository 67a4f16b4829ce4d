// nubo::transfer::unpack: archive -> directory, on the pipeline. The producer reads chunk
// records in index order (and, when resuming, checks what an earlier attempt left); workers
// decode and check each chunk's XXH3-64; the consumer writes each file under a temporary name,
// hashes its content, and renames it into place only when the XXH3-128 matches.
//
// Resume: the journal ("<dir>/.nubo-unpack-<archive id>.journal") lists the files renamed into
// place and checkpoints of large files in progress. A temporary file is kept up to its last
// chunk whose bytes still match the archive's checksum; nothing else is trusted.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <optional>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "common/log.hpp"
#include "nubo/error.hpp"
#include "nubo/transfer.hpp"
#include "transfer/archive/archive_reader.hpp"
#include "transfer/journal.hpp"
#include "transfer/paths.hpp"
#include "transfer/pipeline/options.hpp"
#include "transfer/pipeline/pipeline.hpp"
#include "transfer/pipeline/progress.hpp"
#include "transfer/pipeline/summary.hpp"
#include "transfer/pipeline/target_dir.hpp"

namespace nubo::transfer {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::uint16_t kFileDone = 2;
constexpr std::uint16_t kFileCheckpoint = 3;
// A file in progress is checkpointed after a sixteenth of it (at least 4 chunks, at most
// 256 MiB), and finished files are recorded in batches of this many.
std::uint64_t checkpoint_interval(std::uint64_t size, std::uint64_t chunk_size) {
  return std::clamp<std::uint64_t>(size / 16, 4 * chunk_size, 256 << 20);
}
constexpr std::size_t kDoneBatch = 256;

// Refuses, before anything is written, entries that unpack could not place safely: links that
// lead out of the target, and entries below a path that is not a directory in the archive.
void check_entries(const ArchiveFile& a) {
  std::unordered_map<std::string_view, format::EntryKind> kinds;
  for (const auto& e : a.index().entries) kinds.emplace(e.meta.path, e.meta.kind);
  for (std::size_t i = 0; i < a.index().entries.size(); ++i) {
    const auto& e = a.index().entries[i];
    // A bundled entry's record is checked when its bundle is decoded, before any use.
    if (e.meta.kind != format::EntryKind::file && !e.bundled) a.check_entry_record(i);
    if (e.meta.kind == format::EntryKind::symlink)
      paths::check_link(e.meta.path, e.meta.link_target);
    // A file is written under its temporary name first: an entry of that name beside it would
    // be overwritten by it.
    if (e.meta.kind == format::EntryKind::file) {
      auto tmp = paths::join(paths::parent(e.meta.path), temp_name(paths::leaf(e.meta.path)));
      if (kinds.count(tmp))
        throw Error(Errc::corrupt, a.path() + ": entry '" + tmp +
                                       "' has the temporary name unpack gives '" + e.meta.path +
                                       "' while writing it; refused");
    }
    for (auto dir = paths::parent(e.meta.path); !dir.empty(); dir = paths::parent(dir)) {
      auto it = kinds.find(dir);
      if (it != kinds.end() && it->second != format::EntryKind::directory) {
        throw Error(Errc::corrupt, a.path() + ": entry '" + e.meta.path + "' lies below the " +
                                       std::string(format::entry_kind_name(it->second)) + " '" +
                                       std::string(dir) + "'; refused");
      }
    }
  }
}

struct UnpackJob {
  enum class Kind { begin, chunk, end, bundle } kind = Kind::begin;
  std::size_t entry = 0;
  std::size_t bundle_end = 0;  // bundle: its members are [entry, bundle_end)
  std::uint64_t chunk = 0;
  std::vector<std::byte> record, raw;
  Bytes data;  // chunk: its decoded bytes (in raw, or in record for a raw chunk)
  // begin: how to start the file
  bool skip = false;              // already complete at its final name
  bool fix_metadata = false;      // complete, but its mode or time differ
  std::uint64_t start_chunk = 0;  // chunks already verified in the temporary file
  FileHasher hasher;              // the content hash of those chunks
  // bundle: per member, whether it is complete already (skip) and whether only its metadata
  // must be set
  std::vector<std::pair<bool, bool>> members;
};

struct Shared {
  const ArchiveFile& archive;
  TargetDir& target;  // the consumer's
  // The producer's own view of the same directory: a TargetDir caches an open directory, so two
  // threads never share one.
  TargetDir& planning;
  Journal& journal;
  const UnpackOptions& options;
  std::set<std::size_t> done;                          // from the journal
  std::unordered_map<std::size_t, Bytes> checkpoints;  // entry -> journal payload
};

// Decides how file `entry` starts: skipped (complete already), or continued from the chunks of
// its temporary file that still match the archive. Reads, so it runs on the producer thread.
void plan_file(Shared& s, std::size_t entry, UnpackJob& job, std::vector<std::byte>& buffer) {
  const auto& e = s.archive.index().entries[entry];
  const auto& path = e.meta.path;
  job.skip = job.fix_metadata = false;
  job.start_chunk = 0;
  job.hasher.reset();
  if (!s.options.resume) return;

  if (auto st = s.planning.stat(path);
      st && S_ISREG(st->st_mode) && static_cast<std::uint64_t>(st->st_size) == e.meta.size) {
    bool same_meta = mtime_ns(*st) == e.meta.mtime_ns &&
                     (st->st_mode & 07777) == s.planning.mode_for(e.meta.mode);
    // Recorded as done by an earlier attempt and untouched since: trusted without reading.
    if (s.done.count(entry) && same_meta) {
      job.skip = true;
      return;
    }
    // Otherwise an existing file counts only if its content hashes to the archive's.
    FileHasher h;
    auto fd = s.planning.open_read(path);
    std::uint64_t at = 0;
    buffer.resize(s.archive.chunk_size());
    while (at < e.meta.size) {
      auto n = fd.pread(buffer, at);
      if (n == 0) break;
      h.update({buffer.data(), n});
      at += n;
    }
    if (at == e.meta.size && h.digest() == e.hash) {
      job.skip = true;
      job.fix_metadata = !same_meta;
      return;
    }
  }

  auto tmp = temp_name(paths::leaf(path));
  auto tst = s.planning.stat(paths::join(paths::parent(path), tmp));
  if (!tst || !S_ISREG(tst->st_mode)) return;
  auto size = static_cast<std::uint64_t>(tst->st_size);
  // Start from the file's checkpoint when there is a usable one, else from its first chunk;
  // then keep each further chunk whose bytes match the archive's checksum.
  std::uint64_t k = 0;
  if (auto it = s.checkpoints.find(entry); it != s.checkpoints.end()) {
    try {
      ByteReader r(it->second, "checkpoint");
      r.get<std::uint32_t>();
      auto chunks = r.get<std::uint64_t>();
      auto state = r.take(r.get<std::uint32_t>());
      if (chunks <= e.chunk_count && chunks * s.archive.chunk_size() <= size &&
          job.hasher.restore(state)) {
        k = chunks;
      } else {
        job.hasher.reset();
      }
    } catch (const Error&) {
      job.hasher.reset();
    }
  }
  auto fd = s.planning.open_file(path, tmp, TargetDir::Open::existing);
  for (; k < e.chunk_count; ++k) {
    const auto& c = s.archive.chunk(entry, k);
    buffer.resize(c.raw_size);
    if (fd.pread(buffer, k * s.archive.chunk_size()) != c.raw_size) break;
    if (hash64(buffer) != c.raw_hash) break;
    job.hasher.update(buffer);
  }
  job.start_chunk = k;
}

class Producer {
 public:
  // Reads ahead when the whole archive is to be read (not a resume, which skips what was done).
  explicit Producer(Shared& s) : s_(s) {
    if (s.done.empty() && s.checkpoints.empty()) ahead_.emplace(s.archive);
  }

  bool operator()(UnpackJob& job) {
    const auto& entries = s_.archive.index().entries;
    for (;;) {
      if (entry_ >= entries.size()) return false;
      const auto& e = entries[entry_];
      if (e.bundled) {
        bundle(job);
        return true;
      }
      if (e.meta.kind != format::EntryKind::file) {
        ++entry_;
        continue;
      }
      switch (stage_) {
        case Stage::begin:
          job.kind = UnpackJob::Kind::begin;
          job.entry = entry_;
          // The records the index repeats are checked too, so that unpack, like verify, notices
          // damage anywhere (a file it skips included): the entry record here, the end record
          // after the chunks, in the order they lie in the archive (which is the order a
          // remote archive is fetched ahead in). A damaged end record stops the file before
          // its end job, so before it could take its name.
          s_.archive.check_entry_record(entry_);
          plan_file(s_, entry_, job, buffer_);
          chunk_ = job.skip ? e.chunk_count : job.start_chunk;
          stage_ = Stage::chunks;
          return true;
        case Stage::chunks:
          if (chunk_ >= e.chunk_count) {
            stage_ = Stage::end;
            continue;
          }
          job.kind = UnpackJob::Kind::chunk;
          job.entry = entry_;
          job.chunk = chunk_;
          if (ahead_) ahead_->chunk(entry_, chunk_);
          s_.archive.read_chunk(entry_, chunk_, job.record);
          ++chunk_;
          return true;
        case Stage::end:
          s_.archive.check_end_record(entry_);
          job.kind = UnpackJob::Kind::end;
          job.entry = entry_;
          stage_ = Stage::begin;
          ++entry_;
          return true;
      }
    }
  }

 private:
  // The bundle that starts at entry_, read, with each member file planned (it holds
  // directories and links too: read all the same, so that damage anywhere is noticed).
  void bundle(UnpackJob& job) {
    job.kind = UnpackJob::Kind::bundle;
    job.entry = entry_;
    job.bundle_end = s_.archive.bundle_members(entry_).second;
    job.members.clear();
    for (auto i = job.entry; i < job.bundle_end; ++i) {
      bool file = s_.archive.index().entries[i].meta.kind == format::EntryKind::file;
      if (file) plan_file(s_, i, job, buffer_);
      job.members.emplace_back(file && job.skip, file && job.fix_metadata);
    }
    if (ahead_) ahead_->bundle(entry_);
    s_.archive.read_bundle(entry_, job.record);
    entry_ = job.bundle_end;
  }

  enum class Stage { begin, chunks, end };
  Shared& s_;
  std::size_t entry_ = 0;
  std::uint64_t chunk_ = 0;
  Stage stage_ = Stage::begin;
  std::vector<std::byte> buffer_;
  std::optional<ReadAhead> ahead_;
};

class Consumer {
 public:
  Consumer(Shared& s, ProgressTracker& progress, Summary& summary)
      : s_(s), progress_(progress), summary_(summary) {}

  void operator()(UnpackJob& job) {
    const auto& a = s_.archive;
    const auto& e = a.index().entries[job.entry];
    switch (job.kind) {
      case UnpackJob::Kind::begin:
        begin(job, e);
        break;
      case UnpackJob::Kind::chunk: {
        if (skip_) break;
        const auto& c = a.chunk(job.entry, job.chunk);
        // Zero chunks stay holes: the file was cut to its verified prefix, so they read as 0.
        if (c.codec != ChunkCodec::zero) {
          file_.pwrite_all(job.data, job.chunk * a.chunk_size());
          hasher_.update(job.data);
        } else {
          hasher_.update_zeros(c.raw_size);
        }
        chunks_written_ = job.chunk + 1;
        count_chunk(summary_, c.codec);
        progress_.add_done(c.raw_size);
        progress_.add_written(format::kRecordHeaderSize + c.stored_size);
        since_checkpoint_ += c.raw_size;
        if (since_checkpoint_ >= interval_) checkpoint(job.entry);
        break;
      }
      case UnpackJob::Kind::end:
        end(job, e);
        break;
      case UnpackJob::Kind::bundle:
        bundle(job);
        break;
    }
    progress_.report();
  }

  // Makes the journal's pending records durable, after the data they describe.
  void commit() {
    s_.journal.commit(s_.options.sync);
    pending_done_ = 0;
  }

  // Keeps what is verified when the job stops early (cancelled): the file in progress, if any.
  void save_progress() {
    if (file_ && !skip_) checkpoint(current_);
    commit();
  }

 private:
  void begin(UnpackJob& job, const format::IndexEntry& e) {
    current_ = job.entry;
    skip_ = job.skip;
    progress_.set_current(e.meta.path);
    count_entry(summary_, format::EntryKind::file);
    summary_.bytes += e.meta.size;
    if (skip_) {
      if (job.fix_metadata) {
        s_.target.set_times_and_mode(e.meta.path, e.meta.mtime_ns, e.meta.mode, false);
      }
      summary_.bytes_skipped += e.meta.size;
      progress_.add_skipped(e.meta.size);
      return;
    }
    auto start = job.start_chunk * s_.archive.chunk_size();
    if (job.start_chunk > 0) {
      summary_.resumed = true;
      summary_.bytes_skipped += start;
      progress_.add_skipped(start);
    }
    tmp_ = temp_name(paths::leaf(e.meta.path));
    file_ = s_.target.open_file(e.meta.path, tmp_, TargetDir::Open::create);
    // Whatever lies past the verified prefix is dropped, never trusted.
    file_.truncate(start);
    hasher_ = std::move(job.hasher);
    chunks_written_ = job.start_chunk;
    since_checkpoint_ = 0;
    interval_ = checkpoint_interval(e.meta.size, s_.archive.chunk_size());
  }

  void end(UnpackJob&, const format::IndexEntry& e) {
    progress_.file_done();
    if (skip_) return;
    file_.truncate(e.meta.size);  // a trailing hole
    if (hasher_.digest() != e.hash) {
      file_ = Fd();
      s_.target.remove(e.meta.path, tmp_);
      throw Error(Errc::corrupt, s_.archive.path() + ": file '" + e.meta.path +
                                     "': content hash mismatch (every chunk matched its own "
                                     "checksum: the index is damaged); not written");
    }
    s_.target.place(file_, e.meta.path, tmp_, e.meta.mtime_ns, e.meta.mode, s_.options.sync);
    std::vector<std::byte> payload;
    ByteWriter(payload).put<std::uint32_t>(static_cast<std::uint32_t>(current_));
    s_.journal.append(kFileDone, payload);
    if (++pending_done_ >= kDoneBatch) commit();
  }

  // Each member file not complete already is written whole, verified and put in place.
  void bundle(UnpackJob& job) {
    const auto& a = s_.archive;
    for (auto i = job.entry; i < job.bundle_end; ++i) {
      const auto& e = a.index().entries[i];
      if (e.meta.kind != format::EntryKind::file) continue;
      auto [skip, fix_metadata] = job.members[i - job.entry];
      progress_.set_current(e.meta.path);
      count_entry(summary_, format::EntryKind::file);
      summary_.bytes += e.meta.size;
      progress_.add_done(e.meta.size);
      progress_.file_done();
      if (skip) {
        if (fix_metadata)
          s_.target.set_times_and_mode(e.meta.path, e.meta.mtime_ns, e.meta.mode, false);
        summary_.bytes_skipped += e.meta.size;
        continue;
      }
      auto content = a.bundled_content(i, job.data);
      if (hash128(content) != e.hash) {
        throw Error(Errc::corrupt, a.path() + ": file '" + e.meta.path +
                                       "': content hash mismatch (its bundle matched its own "
                                       "checksum: the index is damaged); not written");
      }
      auto tmp = temp_name(paths::leaf(e.meta.path));
      auto file = s_.target.open_file(e.meta.path, tmp, TargetDir::Open::replace);
      if (!content.empty()) file.pwrite_all(content, 0);
      s_.target.place(file, e.meta.path, tmp, e.meta.mtime_ns, e.meta.mode, s_.options.sync);
      std::vector<std::byte> payload;
      ByteWriter(payload).put<std::uint32_t>(static_cast<std::uint32_t>(i));
      s_.journal.append(kFileDone, payload);
      if (++pending_done_ >= kDoneBatch) commit();
    }
    count_chunk(summary_, a.index().chunks[a.index().entries[job.entry].first_chunk].codec);
    progress_.add_written(job.record.size());
  }

  void checkpoint(std::size_t entry) {
    if (s_.options.sync) file_.datasync();
    std::vector<std::byte> payload;
    ByteWriter w(payload);
    w.put<std::uint32_t>(static_cast<std::uint32_t>(entry));
    w.put<std::uint64_t>(chunks_written_);
    auto state = hasher_.save();
    w.put<std::uint32_t>(static_cast<std::uint32_t>(state.size()));
    w.put_bytes(state);
    s_.journal.append(kFileCheckpoint, payload);
    commit();
    since_checkpoint_ = 0;
  }

  Shared& s_;
  ProgressTracker& progress_;
  Summary& summary_;
  std::size_t current_ = 0;
  bool skip_ = false;
  std::string tmp_;
  Fd file_;
  FileHasher hasher_;
  std::uint64_t chunks_written_ = 0, since_checkpoint_ = 0, interval_ = 0;
  std::size_t pending_done_ = 0;
};

}  // namespace

Summary unpack(const std::string& archive_path, const std::string& directory,
               const UnpackOptions& options) {
  auto started = Clock::now();
  if (directory.empty()) throw Error(Errc::invalid_argument, "no target directory given");
  auto archive = ArchiveFile::open(archive_path, KeySource::parse(options.key_file));
  auto resources = plan_resources(options.threads, options.memory_limit, archive.chunk_size());
  check_entries(archive);
  const auto& entries = archive.index().entries;

  TargetDir target(directory, options.preserve_special_modes);
  auto journal_path = target.root() + "/.nubo-unpack-" + hex64(archive.id()) + ".journal";
  auto journal = Journal::open(journal_path, "nubo unpack 1\n" + hex64(archive.id()));
  TargetDir planning(directory, options.preserve_special_modes);
  Shared shared{archive, target, planning, journal, options, {}, {}};
  if (!options.resume) journal.reset();
  if (options.resume) {
    for (const auto& r : journal.loaded()) {
      if (r.payload.size() < 4) continue;
      auto entry = get_le<std::uint32_t>(r.payload.data());
      if (entry >= entries.size()) continue;
      if (r.type == kFileDone) shared.done.insert(entry);
      if (r.type == kFileCheckpoint) shared.checkpoints[entry] = r.payload;
    }
  }

  Summary summary;
  std::uint64_t total = 0;
  for (const auto& e : entries) total += e.meta.size;
  ProgressTracker progress(options.progress, total, entries.size());
  progress.report(true);

  // Directories first (writable until the end), then files, then links and directory times.
  for (const auto& e : entries) {
    if (e.meta.kind != format::EntryKind::directory) continue;
    target.make_dir(e.meta.path);
    count_entry(summary, format::EntryKind::directory);
    progress.file_done();
  }

  Producer producer(shared);
  Consumer consumer(shared, progress, summary);
  PipelineStages<UnpackJob> stages;
  stages.produce = [&](UnpackJob& job) { return producer(job); };
  stages.work = [&](UnpackJob& job) {
    thread_local Decompressor decompressor;
    if (job.kind == UnpackJob::Kind::chunk)
      job.data = archive.decode_chunk(job.entry, job.chunk, job.record, job.raw, decompressor);
    if (job.kind == UnpackJob::Kind::bundle)
      job.data = archive.decode_bundle(job.entry, job.record, job.raw, decompressor);
  };
  stages.consume = [&](UnpackJob& job) { consumer(job); };
  try {
    run_pipeline(resources.slots, resources.workers, stages);
  } catch (const Error& e) {
    if (e.code() == Errc::cancelled) consumer.save_progress();
    throw;
  }
  consumer.commit();

  for (const auto& e : entries) {
    if (e.meta.kind != format::EntryKind::symlink) continue;
    target.symlink(e.meta.path, e.meta.link_target);
    target.set_times_and_mode(e.meta.path, e.meta.mtime_ns, e.meta.mode, true);
    count_entry(summary, format::EntryKind::symlink);
    progress.file_done();
  }
  // Deepest first, so that setting a directory's time is not undone by its children.
  for (auto it = entries.rbegin(); it != entries.rend(); ++it) {
    if (it->meta.kind != format::EntryKind::directory) continue;
    target.set_times_and_mode(it->meta.path, it->meta.mtime_ns, it->meta.mode, false);
  }
  if (options.sync) sync_parent_dir(journal_path);
  journal.remove();
  summary.bytes_stored = archive.size();
  summary.bytes_transferred = archive.source().bytes_fetched();
  summary.network_wait_seconds = archive.source().seconds_waiting();
  summary.seconds = std::chrono::duration<double>(Clock::now() - started).count();
  progress.finish();
  return summary;
}

}  // namespace nubo::transfer
