#include "transfer/net/session.hpp"

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <thread>

#include <unistd.h>

#include "common/log.hpp"
#include "common/text.hpp"
#include "nubo/error.hpp"
#include "transfer/hash.hpp"
#include "transfer/paths.hpp"

namespace nubo::transfer::net {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::uint16_t kChunkVerified = 1;
constexpr std::uint16_t kFileDone = 2;
constexpr std::uint16_t kFileReset = 3;
// Verified chunks are made durable in batches of this many, or this often: a receiver killed
// without warning loses at most one batch (a sender that goes away loses nothing).
constexpr std::size_t kCommitBatch = 8;
constexpr auto kCommitEvery = std::chrono::milliseconds(250);
constexpr std::string_view kJournalPrefix = ".nubo-recv-";

std::vector<std::byte> entry_chunk(std::uint32_t entry, std::uint64_t chunk) {
  std::vector<std::byte> p;
  ByteWriter w(p);
  w.put<std::uint32_t>(entry);
  w.put<std::uint64_t>(chunk);
  return p;
}

}  // namespace

Session::Session(SessionConfig config) : config_(std::move(config)) {
  last_commit_ = last_activity_ = Clock::now();
}

Session::~Session() {
  close();
}

std::string Session::full(const format::EntryMeta& e) const {
  return paths::join(subdir_, e.path);
}

void Session::begin(const Begin& b) {
  std::lock_guard lock(mutex_);
  if (chunk_size_ != 0) throw Error(Errc::corrupt, "a second begin message");
  chunk_size_ = b.chunk_size;
  entry_count_ = b.entry_count;
  subdir_ = b.subdir;
  auto head = encode_begin(b);
  id_ = hash64(head);
}

void Session::add_entries(std::vector<format::EntryMeta> entries) {
  std::lock_guard lock(mutex_);
  if (chunk_size_ == 0 || planned_) throw Error(Errc::corrupt, "entries outside the manifest");
  if (entries_.size() + entries.size() > entry_count_)
    throw Error(Errc::corrupt, "more entries than the begin message announced");
  for (auto& e : entries) {
    paths::check_entry(e.path);
    auto f = full(e);
    auto leaf = paths::leaf(f);
    if (is_temp_name(leaf))
      throw Error(Errc::corrupt, "entry '" + e.path + "': a temporary file's name; refused");
    if (paths::parent(f).empty() && leaf.starts_with(kJournalPrefix))
      throw Error(Errc::corrupt, "entry '" + e.path + "': a journal's name; refused");
    if (e.kind == format::EntryKind::symlink) paths::check_link(f, e.link_target);
    if (e.kind == format::EntryKind::file && e.size > (std::uint64_t{1} << 50))
      throw Error(Errc::corrupt, "entry '" + e.path + "': size above 1 PiB; refused");
    if (!paths_.insert(e.path).second)
      throw Error(Errc::corrupt, "entry '" + e.path + "' appears twice; refused");
    auto enc = format::encode_entry(e);
    manifest_bytes_ += enc.size();
    if (manifest_bytes_ > kMaxManifestBytes) throw Error(Errc::corrupt, "manifest too large");
    // The journal's identity: the manifest, chained entry by entry.
    append(enc, {reinterpret_cast<const std::byte*>(&id_), sizeof id_});
    id_ = hash64(enc);
    entries_.push_back(std::move(e));
  }
}

std::vector<FileStatus> Session::plan() {
  std::lock_guard lock(mutex_);
  if (chunk_size_ == 0 || planned_) throw Error(Errc::corrupt, "entries_end out of order");
  if (entries_.size() != entry_count_)
    throw Error(Errc::corrupt, "the manifest has " + std::to_string(entries_.size()) +
                                   " entries, the begin message announced " +
                                   std::to_string(entry_count_));
  target_ = std::make_unique<TargetDir>(config_.dest, config_.keep_special_modes);
  // The subdirectory and the directories, before anything else (a link in the way is refused).
  if (!subdir_.empty()) {
    std::string at;
    for (auto part : text::split(subdir_, '/')) {
      at = paths::join(at, part);
      target_->make_dir(at);
    }
  }
  // Directories, and the parent of every file: a link or a file in the way is refused now,
  // before any data is sent.
  for (const auto& e : entries_) {
    if (e.kind == format::EntryKind::directory) target_->make_dir(full(e));
    if (e.kind == format::EntryKind::file) target_->parent(full(e), true);
  }

  auto journal_path = config_.dest + "/" + std::string(kJournalPrefix) + hex64(id_) + ".journal";
  job_ = id_;
  // The same send, interrupted a moment ago, may still hold the journal: its connections dead
  // but not yet timed out, or its data streams finishing the chunks they hold. The server ends
  // it (or says why not), and it lets go within moments.
  for (int attempt = 0;; ++attempt) {
    try {
      journal_ = Journal::open(journal_path, "nubo recv 1\n" + hex64(id_));
      break;
    } catch (const Error& e) {
      if (e.code() != Errc::unavailable) throw;
      if (attempt == 0 && config_.journal_held) config_.journal_held(id_);
      if (attempt >= 50)
        throw Error(Errc::unavailable,
                    "another send of the same files to this destination is in progress (" +
                        std::string(e.what()) + "); wait for it to finish, then run it again");
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  std::map<std::uint32_t, std::set<std::uint64_t>> journaled;
  for (const auto& r : journal_.loaded()) {
    if (r.payload.size() < 4) continue;
    auto entry = get_le<std::uint32_t>(r.payload.data());
    if (r.type == kChunkVerified && r.payload.size() == 12)
      journaled[entry].insert(get_le<std::uint64_t>(r.payload.data() + 4));
    if (r.type == kFileReset) journaled.erase(entry);
  }

  std::vector<FileStatus> status;
  for (std::uint32_t i = 0; i < entries_.size(); ++i) {
    const auto& e = entries_[i];
    if (e.kind != format::EntryKind::file) continue;
    auto f = std::make_unique<File>();
    f->entry = i;
    f->chunks = format::chunks_for(e.size, chunk_size_);
    FileStatus s;
    s.entry = i;
    auto path = full(e);
    if (auto st = target_->stat(path); st && S_ISREG(st->st_mode) &&
                                       static_cast<std::uint64_t>(st->st_size) == e.size &&
                                       mtime_ns(*st) == e.mtime_ns) {
      f->complete = s.complete = true;
    } else if (auto it = journaled.find(i); it != journaled.end()) {
      auto tmp = target_->stat(paths::join(paths::parent(path), temp_name(paths::leaf(path))));
      if (tmp && S_ISREG(tmp->st_mode)) {
        for (auto c : it->second)
          if (c < f->chunks) f->verified.insert(c);
        f->resumed = !f->verified.empty();
      }
    }
    // Ranges of consecutive verified chunks.
    for (auto it = f->verified.begin(); it != f->verified.end();) {
      auto first = *it, n = std::uint64_t{1};
      for (++it; it != f->verified.end() && *it == first + n; ++it) ++n;
      s.verified.emplace_back(first, n);
    }
    status.push_back(std::move(s));
    files_.emplace(i, std::move(f));
  }
  planned_ = true;
  return status;
}

bool Session::planned() const {
  std::lock_guard lock(mutex_);
  return planned_;
}

Session::File& Session::file_for(std::uint32_t entry, const char* what) {
  auto it = files_.find(entry);
  if (!planned_ || it == files_.end())
    throw Error(Errc::corrupt, std::string(what) + " for entry " + std::to_string(entry) +
                                   ", which is not a file of this send");
  return *it->second;
}

MutableBytes Session::decode_checked(ChunkCodec codec, Bytes payload, std::uint32_t raw_size,
                                     std::uint64_t raw_hash, StreamState& stream,
                                     const std::string& where) {
  MutableBytes raw;
  if (codec == ChunkCodec::none) {
    raw = {const_cast<std::byte*>(payload.data()), payload.size()};
  } else {
    if (stream.scratch.size() < raw_size) stream.scratch.resize(raw_size);
    raw = {stream.scratch.data(), raw_size};
    if (codec == ChunkCodec::zero) {
      std::fill(raw.begin(), raw.end(), std::byte{0});
    } else {
      try {
        stream.decompressor.decompress(codec, payload, raw);
      } catch (const Error& e) {
        throw Error(Errc::corrupt, where + ": " + e.what());
      }
    }
  }
  if (hash64(raw) != raw_hash) throw Error(Errc::corrupt, where + ": checksum mismatch");
  return raw;
}

void Session::chunk(const ChunkMeta& meta, Bytes payload, StreamState& stream) {
  File* f = nullptr;
  int fd = -1;
  std::string name;
  {
    std::lock_guard lock(mutex_);
    f = &file_for(meta.entry, "a chunk");
    const auto& e = entries_[meta.entry];
    auto where = "chunk " + std::to_string(meta.index) + " of '" + e.path + "'";
    if (f->complete || f->finalizing || f->finalized)
      throw Error(Errc::corrupt, where + ": the file is already complete");
    if (meta.index >= f->chunks) throw Error(Errc::corrupt, where + ": beyond the file's end");
    auto expected = std::min<std::uint64_t>(chunk_size_, e.size - meta.index * chunk_size_);
    if (meta.raw_size != expected)
      throw Error(Errc::corrupt, where + ": " + std::to_string(meta.raw_size) +
                                     " bytes, expected " + std::to_string(expected));
    if (f->verified.count(meta.index) || f->writing.count(meta.index))
      throw Error(Errc::corrupt, where + ": sent twice");
    if (!f->fd) {
      auto path = full(e);
      f->fd = target_->open_file(path, temp_name(paths::leaf(path)), TargetDir::Open::create);
      // Only verified chunks of an earlier attempt are kept; a new file starts empty, so its
      // zero chunks stay holes.
      if (!f->resumed) f->fd.truncate(0);
      f->fd.truncate(e.size);
    }
    f->writing.insert(meta.index);
    fd = f->fd.get();
    name = where;
  }
  try {
    auto raw = decode_checked(meta.codec, payload, meta.raw_size, meta.raw_hash, stream, name);
    auto offset = meta.index * chunk_size_;
    bool hole = meta.codec == ChunkCodec::zero &&
                (!f->resumed ||
                 ::fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                             static_cast<off_t>(offset), static_cast<off_t>(raw.size())) == 0);
    if (!hole) pwrite_all(fd, raw, offset, name);
  } catch (...) {
    std::lock_guard lock(mutex_);
    f->writing.erase(meta.index);
    throw;
  }
  bool ready = false;
  {
    std::lock_guard lock(mutex_);
    f->writing.erase(meta.index);
    f->verified.insert(meta.index);
    if (!f->dirty) {
      f->dirty = true;
      dirty_.push_back(f);
    }
    journal_.append(kChunkVerified, entry_chunk(meta.entry, meta.index));
    ++pending_records_;
    last_activity_ = Clock::now();
    maybe_commit_locked(false);
    if (f->end && f->verified.size() == f->chunks && !f->finalizing) {
      f->finalizing = ready = true;
    }
  }
  if (ready) finalize(*f);
}

void Session::file_end(const FileEnd& end) {
  File* f = nullptr;
  {
    std::lock_guard lock(mutex_);
    f = &file_for(end.entry, "a file_end");
    if (f->complete || f->end)
      throw Error(Errc::corrupt, "file '" + entries_[end.entry].path + "': a second end");
    f->end = end.hash;
    if (f->verified.size() != f->chunks || f->finalizing) return;
    f->finalizing = true;
    last_activity_ = Clock::now();
  }
  finalize(*f);
}

void Session::finalize(File& f) {
  const auto& e = entries_[f.entry];
  auto path = full(e);
  auto tmp = temp_name(paths::leaf(path));
  bool ok = false;
  std::string problem;
  try {
    int fd;
    {
      std::lock_guard lock(mutex_);
      // No chunk opened it in this attempt: an empty file, or one whose chunks an earlier
      // attempt verified (kept: the read-back below is what decides).
      if (!f.fd) {
        f.fd = target_->open_file(path, tmp, TargetDir::Open::create);
        if (!f.resumed) f.fd.truncate(0);
        f.fd.truncate(e.size);
      }
      fd = f.fd.get();
    }
    if (config_.sync && ::fdatasync(fd) != 0) throw_io("fdatasync", f.fd.name(), errno);
    // Read back what is on disk, skipping holes (a sparse file's zeros are not read).
    ok = hash_on_disk(fd, e.size, f.fd.name()) == *f.end;
    if (!ok) problem = "content hash mismatch (the source changed while it was sent?); not written";
  } catch (const Error& err) {
    problem = err.what();
  }

  std::lock_guard lock(mutex_);
  try {
    if (ok) {
      // Made durable before it was read back (above).
      target_->place(f.fd, path, tmp, e.mtime_ns, e.mode, false);
      journal_.append(kFileDone, entry_chunk(f.entry, 0));
      ++pending_records_;
      f.finalized = true;
      ++totals_.files;
      totals_.bytes += e.size;
      settled_.notify_all();
      return;
    }
  } catch (const Error& err) {
    problem = err.what();
  }
  reject_locked(f, problem);
}

void Session::reject_locked(File& f, const std::string& problem) {
  const auto& e = entries_[f.entry];
  auto path = full(e);
  log::warn("receiving '" + path + "': " + problem);
  f.fd = Fd();
  try {
    target_->remove(path, temp_name(paths::leaf(path)));
  } catch (const Error&) {
  }
  journal_.append(kFileReset, entry_chunk(f.entry, 0));
  ++pending_records_;
  f.verified.clear();
  f.resumed = false;
  f.finalizing = false;
  f.end.reset();
  f.failed = true;
  if (failed_++ == 0) first_failure_ = "file '" + e.path + "': " + problem;
  settled_.notify_all();
}

void Session::maybe_commit_locked(bool force) {
  if (pending_records_ == 0 || !journal_) return;
  auto now = Clock::now();
  if (!force && pending_records_ < kCommitBatch && now - last_commit_ < kCommitEvery) return;
  // The data first, then the records that describe it.
  for (auto* f : dirty_) {
    if (config_.sync && f->fd) f->fd.datasync();
    f->dirty = false;
  }
  dirty_.clear();
  journal_.commit(config_.sync);
  pending_records_ = 0;
  last_commit_ = now;
}

Result Session::finish() {
  std::lock_guard lock(mutex_);
  if (!planned_ || finished_) throw Error(Errc::corrupt, "finish out of order");
  Result r;
  r.files = totals_.files;
  r.bytes = totals_.bytes;
  r.failed = failed_;
  r.text = first_failure_;
  std::uint32_t incomplete = 0;
  for (auto& [i, f] : files_) {
    if (f->complete || f->finalized) continue;
    if (++incomplete == 1 && r.text.empty())
      r.text = "file '" + entries_[i].path + "': incomplete (" +
               std::to_string(f->verified.size()) + " of " + std::to_string(f->chunks) + " chunks)";
  }
  r.failed = std::max(r.failed, incomplete);
  for (const auto& e : entries_) {
    if (e.kind != format::EntryKind::symlink) continue;
    target_->symlink(full(e), e.link_target);
    target_->set_times_and_mode(full(e), e.mtime_ns, e.mode, true);
  }
  for (auto it = entries_.rbegin(); it != entries_.rend(); ++it) {
    if (it->kind != format::EntryKind::directory) continue;
    target_->set_times_and_mode(full(*it), it->mtime_ns, it->mode, false);
  }
  maybe_commit_locked(true);
  if (r.failed == 0) {
    if (config_.sync) sync_parent_dir(journal_.path());
    journal_.remove();
  }
  finished_ = true;
  return r;
}

void Session::fail(const std::string& why) {
  std::lock_guard lock(mutex_);
  if (!fatal_) fatal_ = why;
}

std::optional<std::string> Session::failure() const {
  std::lock_guard lock(mutex_);
  return fatal_;
}

void Session::close() noexcept {
  std::lock_guard lock(mutex_);
  try {
    if (planned_ && !finished_) maybe_commit_locked(true);
  } catch (const Error& e) {
    log::warn(std::string("keeping a send's progress: ") + e.what());
  }
  ended_ = true;
  settled_.notify_all();
}

std::chrono::steady_clock::time_point Session::last_activity() const {
  std::lock_guard lock(mutex_);
  return last_activity_;
}

SessionTotals Session::totals() const {
  std::lock_guard lock(mutex_);
  return totals_;
}

}  // namespace nubo::transfer::net
