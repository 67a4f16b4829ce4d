#include "transfer/pipeline/pack_object.hpp"

#include <filesystem>
#include <map>
#include <mutex>
#include <optional>

#include "common/log.hpp"
#include "nubo/error.hpp"
#include "transfer/hash.hpp"
#include "transfer/journal.hpp"
#include "transfer/store/part_uploader.hpp"
#include "transfer/store/parts.hpp"

namespace nubo::transfer {
namespace {

using namespace format;

// The journal's records, in the order they are written.
constexpr std::uint16_t kUpload = 1;      // the multipart upload's id
constexpr std::uint16_t kHeader = 2;      // the archive's header, as written (its key block)
constexpr std::uint16_t kEntries = 3;     // index entries from a position on (index_delta)
constexpr std::uint16_t kChunks = 4;      // index chunks from a position on
constexpr std::uint16_t kSealed = 5;      // a part made: its number, size and the pack's state
constexpr std::uint16_t kUploaded = 6;    // a part the server took: its number and ETag
constexpr std::uint16_t kCompleting = 7;  // CompleteMultipartUpload was asked for

// Index changes go in records of about this size: a journal record holds at most 64 KiB.
constexpr std::size_t kDeltaRecord = 48 << 10;
// S3 refuses parts under 5 MiB but the last: a cancel seals the part being made only from there.
constexpr std::uint64_t kLeastPart = 5 << 20;
// Parts on their way at once. Memory: about this many parts, plus the one being made.
constexpr int kStreams = 4;

// The writer's bytes, appended to the part being made.
class PartBuffer : public ArchiveOutput {
 public:
  explicit PartBuffer(std::vector<std::byte>& part) : part_(part) {}
  void write(Bytes a, Bytes b) override {
    append(part_, a);
    append(part_, b);
  }

 private:
  std::vector<std::byte>& part_;
};

// A kSealed record: the part's number (u32) and size (u64), then the pack's state at its end.
constexpr std::size_t kSealedHead = 12;
std::vector<std::byte> encode_sealed(int number, std::uint64_t size, const PackCheckpoint& c) {
  std::vector<std::byte> out;
  ByteWriter w(out);
  w.put<std::uint32_t>(static_cast<std::uint32_t>(number));
  w.put<std::uint64_t>(size);
  w.put_bytes(encode_checkpoint(c));
  return out;
}

std::vector<std::byte> encode_uploaded(const store::Part& p) {
  std::vector<std::byte> out;
  ByteWriter w(out);
  w.put<std::uint32_t>(static_cast<std::uint32_t>(p.number));
  w.put_bytes(as_bytes(p.etag));
  return out;
}

// An index rebuilt from the journal, part by part.
class IndexReplay {
 public:
  // Applies a kEntries or kChunks record; false when it does not fit what came before.
  bool apply(const Journal::Record& r, bool v2) {
    try {
      ByteReader in(r.payload, "journal");
      const auto first = in.get<std::uint64_t>();
      const auto count = in.get<std::uint32_t>();
      if (r.type == kEntries) {
        // A part changes the entries from the last one it found open on.
        if (first > index_.entries.size() || first + 1 < saved_entries_) return false;
        index_.entries.resize(first);
        changed_from_ = std::min<std::uint64_t>(changed_from_, first);
        for (std::uint32_t i = 0; i < count; ++i)
          index_.entries.push_back(decode_index_entry(in, v2));
      } else {
        if (first != index_.chunks.size()) return false;
        for (std::uint32_t i = 0; i < count; ++i) index_.chunks.push_back(decode_index_chunk(in));
      }
      return in.remaining() == 0;
    } catch (const Error&) {
      return false;
    }
  }
  // The entries changed since the last mark(), from the first of them.
  std::uint64_t changed_from() const { return changed_from_; }
  void mark() {
    saved_entries_ = index_.entries.size();
    saved_chunks_ = index_.chunks.size();
    saved_last_ = index_.entries.empty() ? std::nullopt : std::optional(index_.entries.back());
    changed_from_ = UINT64_MAX;
  }
  // Back to the last mark(): a part that was not kept leaves no trace.
  void undo() {
    index_.entries.resize(std::min<std::uint64_t>(saved_entries_, index_.entries.size()));
    if (saved_last_) {
      if (index_.entries.size() < saved_entries_) index_.entries.push_back(*saved_last_);
      index_.entries.back() = *saved_last_;
    }
    index_.chunks.resize(saved_chunks_);
  }
  Index& index() { return index_; }
  const Index& index() const { return index_; }

 private:
  Index index_;
  std::uint64_t saved_entries_ = 0, saved_chunks_ = 0, changed_from_ = UINT64_MAX;
  std::optional<IndexEntry> saved_last_;
};

class ObjectTarget : public PackTarget {
 public:
  ObjectTarget(const std::vector<std::string>& sources, store::ObjectUrl url,
               const PackOptions& options)
      : url_(std::move(url)),
        options_(options),
        identity_(pack_identity(sources, options) + "\nto " + url_.text()),
        store_(store::open(url_, store::Operation::pack)) {}

  Start start(const WalkResult& walk, std::uint32_t chunk_size, const KeySource& keys) override {
    // Parts are sized before the archive's size is known: its content, stored raw at worst,
    // and a generous allowance for the records of many small files.
    part_size_ = store::part_size_for(walk.bytes + 512 * walk.entries.size() + (1 << 20));
    chunk_size_ = chunk_size;
    journal_.emplace(Journal::open(journal_path(), identity_));
    bool completing = false;
    for (const auto& r : journal_->loaded()) {
      if (r.type == kUpload)
        upload_id_.assign(reinterpret_cast<const char*>(r.payload.data()), r.payload.size());
      completing |= r.type == kCompleting;
    }
    // Killed while the upload was being completed, it may be complete: an object is never
    // made of parts a completed upload may still list on some servers. Pack it again.
    if (options_.resume && !upload_id_.empty() && !completing) {
      if (auto resumed = resume(walk, keys)) return std::move(*resumed);
    }
    if (!upload_id_.empty()) abort_upload();  // an earlier attempt's, of which nothing is kept
    upload_id_ = store_->create_multipart(url_, {});
    start_uploader();
    part_.reserve(part_size_ + chunk_size + (1 << 20));
    auto writer = ArchiveWriter::create(std::make_unique<PartBuffer>(part_), chunk_size,
                                        fresh_encryption(keys));
    journal_->reset();
    journal_->append(kUpload, as_bytes(upload_id_));
    journal_->append(kHeader, part_);  // the writer has written the header alone
    journal_->commit(options_.sync);
    return {std::move(writer), {}};
  }

  bool due(std::uint64_t offset, std::uint64_t) const override {
    return offset - part_start_ >= part_size_;
  }

  void checkpoint(ArchiveWriter& writer, const PackCheckpoint& c) override {
    if (part_.size() < kLeastPart) return;  // a cancel early in a part: nothing to seal
    const auto& index = writer.index();
    {
      std::lock_guard lock(journal_mutex_);
      journal_delta(index);
      journal_->append(kSealed, encode_sealed(part_number_, part_.size(), c));
      journal_->commit(options_.sync);
    }
    entry_from_ = c.open ? index.entries.size() - 1 : index.entries.size();
    chunk_from_ = index.chunks.size();
    part_start_ = c.archive_offset;
    uploader_->send(part_number_++, std::exchange(part_, {}));
    part_.reserve(part_size_ + chunk_size_ + (1 << 20));
  }

  // The last part holds the rest (the index and the trailer); it may be under 5 MiB.
  void finish(ArchiveWriter&, Summary& summary) override {
    uploader_->send(part_number_, std::exchange(part_, {}));
    auto parts = uploader_->finish();
    {
      std::lock_guard lock(journal_mutex_);
      journal_->append(kCompleting, {});
      journal_->commit(options_.sync);
    }
    store_->complete_multipart(url_, upload_id_, parts);
    summary.bytes_transferred = uploader_->bytes_sent();
    summary.network_wait_seconds = uploader_->seconds_waiting();
    std::lock_guard lock(journal_mutex_);
    journal_->remove();
  }

  // A failed pack keeps what is up, for the same pack to resume from. A cancelled one aborts
  // the upload, or with keep_partial first sends the parts it has made (a few at most).
  void abort(bool cancelled) noexcept override {
    if (!uploader_) return;
    const bool discard = cancelled && !options_.keep_partial;
    uploader_->stop(cancelled && !discard);
    if (!discard) return;
    abort_upload();
    std::lock_guard lock(journal_mutex_);
    try {
      journal_->remove();
    } catch (const Error& e) {
      log::warn(std::string("removing the journal of a cancelled upload: ") + e.what());
    }
  }

  // Killed once the object was whole, an attempt may have left its journal, or an upload it
  // began and never completed (when another attempt completed the object).
  void forget_earlier() override {
    std::error_code ec;
    if (!std::filesystem::exists(journal_path(), ec)) return;
    journal_.emplace(Journal::open(journal_path(), identity_));
    for (const auto& r : journal_->loaded())
      if (r.type == kUpload)
        upload_id_.assign(reinterpret_cast<const char*>(r.payload.data()), r.payload.size());
    if (!upload_id_.empty()) abort_upload();
    journal_->remove();
  }

 private:
  std::string journal_path() const {
    return store::cache_dir("") + "/pack-" + hex64(hash64(as_bytes(url_.text()))) + ".journal";
  }

  void start_uploader() {
    uploader_.emplace(*store_, url_, upload_id_, kStreams, [this](const store::Part& p) {
      std::lock_guard lock(journal_mutex_);
      journal_->append(kUploaded, encode_uploaded(p));
      journal_->commit(options_.sync);
    });
  }

  void abort_upload() noexcept {
    try {
      store_->abort_multipart(url_, upload_id_);
    } catch (const Error& e) {
      if (e.code() == Errc::not_found) return;  // gone already: completed, aborted or expired
      log::warn("aborting an earlier upload of " + url_.text() + ": " + e.what());
    }
  }

  // The index records added since the last part, in records of at most kDeltaRecord.
  void journal_delta(const Index& index) {
    journal_items(kEntries, index.entries, entry_from_, encode_index_entry);
    journal_items(kChunks, index.chunks, chunk_from_, encode_index_chunk);
  }

  // items[from, end) as records of `type`: each the position of its first item, how many, and
  // the items as `encode` writes them.
  template <typename Item>
  void journal_items(std::uint16_t type, const std::vector<Item>& items, std::uint64_t from,
                     void (*encode)(ByteWriter&, const Item&)) {
    std::vector<std::byte> batch, record;
    std::uint64_t first = from;
    for (auto i = from; i < items.size(); ++i) {
      ByteWriter items_out(batch);
      encode(items_out, items[i]);
      if (batch.size() < kDeltaRecord && i + 1 < items.size()) continue;
      record.clear();
      ByteWriter w(record);
      w.put<std::uint64_t>(first);
      w.put<std::uint32_t>(static_cast<std::uint32_t>(i + 1 - first));
      w.put_bytes(batch);
      journal_->append(type, record);
      batch.clear();
      first = i + 1;
    }
  }

  // Continues an earlier attempt from the last part the server holds of it, when it can.
  std::optional<Start> resume(const WalkResult& walk, const KeySource& keys) {
    const auto records = journal_->loaded();
    std::vector<std::byte> head;
    std::map<int, std::string> etags;  // parts the server took, as the journal saw them
    for (const auto& r : records) {
      if (r.type == kHeader) head = r.payload;
      if (r.type == kUploaded && r.payload.size() > 4) {
        ByteReader in(r.payload, "journal");
        const auto number = static_cast<int>(in.get<std::uint32_t>());
        etags[number].assign(reinterpret_cast<const char*>(r.payload.data()) + 4,
                             r.payload.size() - 4);
      }
    }
    if (head.empty()) return std::nullopt;
    std::map<int, store::Part> held;
    try {
      for (const auto& p : store_->list_parts(url_, upload_id_)) held[p.number] = p;
    } catch (const Error& e) {
      if (e.code() != Errc::not_found) throw;
      upload_id_.clear();  // expired or aborted: start again
      return std::nullopt;
    }
    Header header;
    std::optional<ArchiveCipher> cipher;
    try {
      header = decode_header(head);
      if (header.chunk_size != chunk_size_ || header.key.has_value() != keys.encrypts())
        return std::nullopt;
      if (keys.encrypts()) cipher.emplace(keys.open(*header.key, header.kms, url_.text()));
    } catch (const Error& e) {
      if (e.code() == Errc::unavailable) throw;  // KMS out of reach: the upload is kept
      log::warn(std::string(e.what()) + ": starting the upload over");
      return std::nullopt;
    }

    // The parts from the first on, while the server holds each as it was made and its entries
    // are still the sources.
    IndexReplay replay;
    replay.mark();
    std::vector<store::Part> kept;
    std::optional<PackCheckpoint> state;
    std::uint64_t offset = 0;
    std::size_t kept_records = 0;  // records up to the last kept part's seal
    const bool v2 = header.version_major >= 2;
    for (std::size_t i = 0; i < records.size(); ++i) {
      const auto& r = records[i];
      if (r.type == kEntries || r.type == kChunks) {
        if (!replay.apply(r, v2)) break;
        continue;
      }
      if (r.type != kSealed) continue;
      const auto part = kept_part(r, kept.size() + 1, offset, etags, held);
      const auto c = part ? decode_checkpoint(Bytes(r.payload).subspan(kSealedHead)) : std::nullopt;
      if (!c || !fits(*c, replay.index(), offset + part->size) ||
          !same_sources(replay, walk.entries)) {
        break;
      }
      replay.mark();
      kept.push_back(*part);
      offset += part->size;
      state = c;
      kept_records = i + 1;
    }
    replay.undo();  // what came after the last part kept
    if (kept.empty()) return std::nullopt;

    PackResume resume;
    resume.fresh = false;
    resume.offset = offset;
    resume.open = state->open;
    resume.next_entry = state->entries - (state->open ? 1 : 0);
    resume.next_chunk = state->open_chunks;
    if (state->open && !resume.hasher.restore(state->hash_state)) return std::nullopt;
    auto& index = replay.index();
    for (std::size_t i = 0; i < resume.next_entry; ++i)
      if (index.entries[i].meta.kind == format::EntryKind::file)
        resume.skipped_bytes += index.entries[i].meta.size;
    if (state->open) resume.skipped_bytes += state->open_chunks * chunk_size_;

    // The journal keeps what it says of the parts kept, and nothing of the others.
    journal_->reset();
    journal_->append(kUpload, as_bytes(upload_id_));
    journal_->append(kHeader, head);
    for (std::size_t i = 0; i < kept_records; ++i)
      if (records[i].type == kEntries || records[i].type == kChunks || records[i].type == kSealed)
        journal_->append(records[i].type, records[i].payload);
    for (const auto& p : kept) journal_->append(kUploaded, encode_uploaded(p));
    journal_->commit(options_.sync);

    start_uploader();
    for (const auto& p : kept) uploader_->keep(p);
    entry_from_ = resume.next_entry;
    chunk_from_ = index.chunks.size();
    part_number_ = static_cast<int>(kept.size()) + 1;
    part_start_ = offset;
    part_.reserve(part_size_ + chunk_size_ + (1 << 20));
    log::info("resuming the upload of " + url_.text() + ": " + std::to_string(kept.size()) +
              " parts (" + std::to_string(offset) + " bytes) are on the server, " +
              std::to_string(resume.skipped_bytes) + " bytes already packed");
    auto writer = ArchiveWriter::resume(std::make_unique<PartBuffer>(part_), chunk_size_, offset,
                                        std::move(index), std::move(cipher));
    return Start{std::move(writer), std::move(resume)};
  }

  // The part a kSealed record describes, when it is the next one and the server holds the
  // bytes the journal saw go up.
  static std::optional<store::Part> kept_part(const Journal::Record& r, std::size_t next,
                                              std::uint64_t offset,
                                              const std::map<int, std::string>& etags,
                                              const std::map<int, store::Part>& held) {
    if (r.payload.size() < kSealedHead) return std::nullopt;
    ByteReader in(r.payload, "journal");
    const auto number = static_cast<int>(in.get<std::uint32_t>());
    const auto size = in.get<std::uint64_t>();
    if (static_cast<std::size_t>(number) != next || offset + size < offset) return std::nullopt;
    const auto etag = etags.find(number);
    const auto on_server = held.find(number);
    if (etag == etags.end() || on_server == held.end() || on_server->second.size != size ||
        on_server->second.etag != etag->second) {
      return std::nullopt;
    }
    return on_server->second;
  }

  // The state at a part's end agrees with the index replayed up to there.
  static bool fits(const PackCheckpoint& c, const Index& index, std::uint64_t end) {
    if (c.archive_offset != end || c.entries != index.entries.size() || c.entries == 0)
      return false;
    const auto& last = index.entries.back();
    return !c.open ||
           (last.meta.kind == format::EntryKind::file && c.open_chunks == last.chunk_count &&
            last.first_chunk + last.chunk_count == index.chunks.size());
  }

  // The entries the part added are the sources as they are now.
  static bool same_sources(const IndexReplay& replay, const std::vector<SourceEntry>& sources) {
    const auto& entries = replay.index().entries;
    if (entries.size() > sources.size()) return false;
    for (auto i = std::min<std::uint64_t>(replay.changed_from(), entries.size());
         i < entries.size(); ++i) {
      const auto why = entry_difference(entries[i].meta, sources[i].meta);
      if (!why.empty()) {
        log::warn("packing '" + sources[i].meta.path + "' again: " + why +
                  " since the interrupted attempt");
        return false;
      }
    }
    return true;
  }

  store::ObjectUrl url_;
  const PackOptions& options_;
  std::string identity_;
  std::unique_ptr<store::Store> store_;
  std::uint64_t part_size_ = 0;
  std::uint32_t chunk_size_ = 0;
  std::string upload_id_;
  std::mutex journal_mutex_;  // the uploader's threads record parts too
  std::optional<Journal> journal_;
  std::optional<store::PartUploader> uploader_;
  std::vector<std::byte> part_;  // the part being made
  int part_number_ = 1;
  std::uint64_t part_start_ = 0;  // where it starts in the archive
  std::uint64_t entry_from_ = 0;  // the first entry the journal has not recorded as it is now
  std::uint64_t chunk_from_ = 0;
};

}  // namespace

std::unique_ptr<PackTarget> object_target(const std::vector<std::string>& sources,
                                          const store::ObjectUrl& url, const PackOptions& options) {
  if (url.key.empty() || url.key.back() == '/')
    throw Error(Errc::invalid_argument, url.text() + " names no object: give the archive's key");
  return std::make_unique<ObjectTarget>(sources, url, options);
}

}  // namespace nubo::transfer
