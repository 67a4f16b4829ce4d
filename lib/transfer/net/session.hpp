// The receiving side of one send: the manifest of entries, what is already at the destination,
// and the files being written. The control stream plans it; every data stream of the same send
// feeds it chunks concurrently.
//
// Each file is written under its temporary name (target_dir.hpp's temp_name) through a
// TargetDir, so every write stays inside DEST. A chunk is decoded and checked against its
// XXH3-64 before it is written; the journal ("DEST/.nubo-recv-<manifest id>.journal") records
// verified chunks in batches, made durable after the file data they describe (fdatasync, then
// the journal). When every chunk of a file is verified and its whole hash is known, the file is
// read back, hashed, and renamed into place only if the XXH3-128 matches. A file at its final
// name with the size and mtime of the source is complete (only a verified rename gives it that
// mtime) and is skipped.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "transfer/codec/codec.hpp"
#include "transfer/format/format.hpp"
#include "transfer/journal.hpp"
#include "transfer/net/wire.hpp"
#include "transfer/pipeline/target_dir.hpp"

namespace nubo::transfer::net {

// What one data stream keeps between its messages: decompression contexts, a buffer, and its
// own TargetDir (not thread-safe, and it caches the directory last written: each stream writes
// its bundles through its own).
struct StreamState {
  Decompressor decompressor;
  std::vector<std::byte> scratch;
  std::vector<std::byte> copy;  // a bundle member's content read from its source
  std::unique_ptr<TargetDir> target;
};

struct SessionTotals {
  std::uint64_t files = 0, bytes = 0;
};

struct SessionConfig {
  std::string dest;
  bool sync = true;
  double timeout_seconds = 30;      // how long a bundle member waits for its source to arrive
  bool keep_special_modes = false;  // else setuid, setgid and sticky bits are dropped
  // Called when the journal of this send's files is held by another send of the same files (a
  // rerun after a cut link, while the dead connection still holds it): ends that one, or throws
  // the reason this one must wait and for how long.
  std::function<void(std::uint64_t job)> journal_held;
};

class Session {
 public:
  explicit Session(SessionConfig config);
  ~Session();

  // The control stream, in order: begin, add_entries (any number of times), plan, finish.
  void begin(const Begin& b);
  void add_entries(std::vector<format::EntryMeta> entries);
  std::vector<FileStatus> plan();
  Result finish();
  // Makes what was verified durable (the sender went away), and wakes data streams waiting for
  // a source: called when the control stream ends, and when the server stops.
  void close() noexcept;

  // Data streams, once planned. Throw Error(corrupt) for a chunk that does not belong (unknown
  // entry, out of range, a duplicate) or fails its checksum.
  bool planned() const;
  std::uint32_t chunk_size() const { return chunk_size_; }
  void chunk(const ChunkMeta& meta, Bytes payload, StreamState& stream);
  // Throws Error(corrupt) for a member that does not belong (not a file of this send, sent
  // before, or in chunks too), sizes that do not add up, or content that fails its checksums.
  // A member that cannot be written fails alone, as a file that did not verify.
  void bundle(const BundleMeta& meta, Bytes payload, StreamState& stream);
  void file_end(const FileEnd& end);

  // A data stream failed for a reason of the receiver's (a full disk, permission denied): the
  // control stream tells the sender, whichever stream the sender notices first.
  void fail(const std::string& why);
  std::optional<std::string> failure() const;

  // The last time a data stream made progress: the control stream waits as long as data flows.
  std::chrono::steady_clock::time_point last_activity() const;
  SessionTotals totals() const;
  // The identity of the files sent (a hash of the manifest), once planned; 0 before. Read
  // without the session's lock, for the server's bookkeeping.
  std::uint64_t job() const { return job_.load(); }

 private:
  struct File {
    std::uint32_t entry = 0;
    std::uint64_t chunks = 0;
    std::set<std::uint64_t> verified, writing;
    bool resumed = false;  // its temporary file holds verified chunks of an earlier attempt
    Fd fd;
    bool dirty = false;  // written since the last commit
    std::optional<Hash128> end;
    bool complete = false, finalizing = false, finalized = false;
    bool failed = false;  // did not verify or could not be written in this session
  };
  File& file_for(std::uint32_t entry, const char* what);
  void finalize(File& f);  // called without the lock held
  // A file that did not verify or could not be written: nothing of it is kept, and the next
  // attempt sends it all again.
  void reject_locked(File& f, const std::string& problem);
  // Writes verified bundle members under their temporary names and renames them into place;
  // problems[i] says why member i could not be written.
  void write_members(const std::vector<File*>& members, const std::vector<Bytes>& contents,
                     StreamState& stream, std::vector<std::string>& problems);
  // Marks written members finalized, and the others rejected with their problem.
  void settle_locked(const std::vector<File*>& members, const std::vector<std::string>& problems);
  // The content of `source` for a member that names it, once the source is in place (waiting
  // for it while another stream writes it): read back into stream.copy and checked against
  // `hash`. Empty with `problem` set when the source did not arrive intact or differs.
  Bytes content_of_source(File& source, const Hash128& hash, StreamState& stream,
                          std::string& problem);
  // The raw bytes of a chunk or bundle payload, decoded (into stream.scratch unless stored raw)
  // and checked against its XXH3-64; Error(corrupt) naming `where` otherwise.
  static MutableBytes decode_checked(ChunkCodec codec, Bytes payload, std::uint32_t raw_size,
                                     std::uint64_t raw_hash, StreamState& stream,
                                     const std::string& where);
  void maybe_commit_locked(bool force);
  std::string full(const format::EntryMeta& e) const;

  SessionConfig config_;
  std::atomic<std::uint64_t> job_{0};
  std::uint32_t chunk_size_ = 0;
  std::uint64_t entry_count_ = 0, manifest_bytes_ = 0;
  std::string subdir_;
  std::uint64_t id_ = 0;  // a running hash of the manifest: the journal's identity
  std::vector<format::EntryMeta> entries_;
  std::set<std::string> paths_;

  mutable std::mutex mutex_;
  std::condition_variable settled_;  // a file was finalized or rejected, or the send ended
  bool planned_ = false, finished_ = false, ended_ = false;
  std::unique_ptr<TargetDir> target_;
  Journal journal_;
  std::map<std::uint32_t, std::unique_ptr<File>> files_;
  // Files written since the last commit: a commit visits only these, not every file of a send.
  std::vector<File*> dirty_;
  std::size_t pending_records_ = 0;
  std::chrono::steady_clock::time_point last_commit_, last_activity_;
  SessionTotals totals_;
  std::uint32_t failed_ = 0;
  std::string first_failure_;
  std::optional<std::string> fatal_;  // fail()'s reason
};

}  // namespace nubo::transfer::net
