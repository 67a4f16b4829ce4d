#include "transfer/copy/copy_between.hpp"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <optional>
#include <vector>

#include "common/log.hpp"
#include "nubo/error.hpp"
#include "transfer/copy/copy.hpp"
#include "transfer/hash.hpp"
#include "transfer/journal.hpp"
#include "transfer/store/md5.hpp"
#include "transfer/store/parts.hpp"
#include "transfer/store/s3/etag.hpp"

namespace nubo::store {
namespace {

using transfer::CopySummary;
using Clock = std::chrono::steady_clock;

constexpr std::uint16_t kUploadId = 1;  // journal records
constexpr std::uint16_t kPartDone = 2;  // u32 part number, then the part's MD5

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// What the source says of its content, and so what the bytes read are checked against.
struct SourceCheck {
  std::optional<std::string> xxh3;     // nubo's XXH3-128 (hex) in its metadata
  std::optional<s3::EtagMd5> etag;     // its ETag, when it is an MD5 of the content
  std::uint64_t layout_part_size = 0;  // a multipart ETag's part size (0: not known)
  // Whether the whole content must be hashed in order (the per-part MD5s do not suffice).
  bool in_order() const { return xxh3 || (etag && etag->parts == 0); }
};

SourceCheck source_check(Store& source, const ObjectUrl& from, const ObjectInfo& info) {
  SourceCheck c;
  if (const auto h = info.metadata.find(kHashMetadata); h != info.metadata.end())
    c.xxh3 = h->second;
  if (!s3::etag_is_not_content_md5(info.server_side_encryption, info.customer_key))
    c.etag = s3::parse_etag_md5(info.etag);
  if (c.etag && c.etag->parts > 0)
    if (const auto first = source.head_part(from, 1); first && first->size > 0)
      c.layout_part_size = first->size;
  return c;
}

// The bytes of every part, hashed in part order while the parts are fetched by several threads:
// a part waits for the ones before it to be hashed (they were handed out first, so the wait is
// short) and memory stays at a part per thread.
class InOrder {
 public:
  // Only what the source's check needs: its XXH3-128 when it has one, else the MD5 of its
  // content (MD5 is several times slower).
  explicit InOrder(const SourceCheck& check) : xxh3_only_(check.xxh3.has_value()) {}
  void hash(std::size_t index, transfer::Bytes bytes) {
    std::unique_lock lock(mutex_);
    turn_.wait(lock, [&] { return next_ == index || failed_; });
    if (failed_) throw Error(Errc::cancelled, "an earlier part failed");
    if (xxh3_only_)
      xxh3_.update(bytes);
    else
      md5_.update(bytes);
    ++next_;
    turn_.notify_all();
  }
  // A part that will never come: the parts after it stop waiting.
  void fail() {
    std::lock_guard lock(mutex_);
    failed_ = true;
    turn_.notify_all();
  }
  std::string xxh3_hex() const { return xxh3_.digest().hex(); }
  std::string md5_hex() const { return store::md5_hex(md5_.digest()); }

 private:
  std::mutex mutex_;
  std::condition_variable turn_;
  std::size_t next_ = 0;
  bool failed_ = false;
  const bool xxh3_only_;
  transfer::FileHasher xxh3_;
  Md5Stream md5_;
};

// What is wrong with the bytes read, against what the source says; empty when they match.
std::string mismatch(const SourceCheck& check, const InOrder* hashed,
                     const std::vector<Md5>& part_md5s, const std::string& etag) {
  if (check.xxh3 && hashed && hashed->xxh3_hex() != *check.xxh3)
    return "its XXH3-128 is " + *check.xxh3 + ", the bytes read hash to " + hashed->xxh3_hex();
  if (!check.xxh3 && check.etag && check.etag->parts == 0 && hashed &&
      hashed->md5_hex() != check.etag->md5)
    return "its ETag is " + etag + ", the bytes read have the MD5 " + hashed->md5_hex();
  if (check.etag && check.etag->parts > 0 && check.layout_part_size != 0 &&
      static_cast<int>(part_md5s.size()) == check.etag->parts &&
      s3::multipart_etag(part_md5s) != check.etag->md5 + "-" + std::to_string(check.etag->parts))
    return "its ETag is " + etag + ", the bytes read make " + s3::multipart_etag(part_md5s);
  return {};
}

// Within one store: the store copies, the source's bytes never leaving it.
CopySummary copy_in_store(const ObjectUrl& from, Store& destination, const ObjectUrl& to,
                          const ObjectInfo& info, const transfer::CopyOptions& options,
                          std::uint64_t whole_copy_limit) {
  CopySummary s;
  s.files = 1;
  s.bytes = s.bytes_server_side = info.size;
  if (info.size <= whole_copy_limit) {
    const auto etag = destination.copy_object(from, to);
    const auto want = s3::parse_etag_md5(info.etag), got = s3::parse_etag_md5(etag);
    // An object put whole keeps its MD5; a multipart one becomes one part with a new ETag.
    if (want && got && want->parts == 0 && got->parts == 0 && want->md5 != got->md5 &&
        !s3::etag_is_not_content_md5(info.server_side_encryption, info.customer_key))
      throw Error(Errc::corrupt, to.text() + ": the store's copy of " + from.text() +
                                     " has the ETag " + etag + ", the source " + info.etag);
    s.parts = 1;
    return s;
  }
  const auto part = std::max(options.part_size ? options.part_size : part_size_for(info.size),
                             (info.size + 9999) / 10000);
  const auto count = (info.size + part - 1) / part;
  const auto upload_id = destination.create_multipart(to, info.metadata);
  std::vector<Part> parts(count);
  PartProgress progress{options, info.size};
  try {
    run_parts(
        count, options.streams,
        [&](std::size_t i) {
          const auto offset = i * part, n = std::min(part, info.size - offset);
          parts[i] =
              destination.upload_part_copy(to, upload_id, static_cast<int>(i + 1), from, offset, n);
          progress.done += n;
        },
        [&] { return progress.tick(); });
    destination.complete_multipart(to, upload_id, parts);
  } catch (...) {
    abort_upload(destination, to, upload_id, nullptr, "the store's copy");
    throw;
  }
  s.parts = count;
  return s;
}

}  // namespace

CopySummary copy_between(Store& source, const ObjectUrl& from, Store& destination,
                         const ObjectUrl& to, const transfer::CopyOptions& options,
                         std::uint64_t whole_copy_limit) {
  const auto started = Clock::now();
  if (from.is_prefix() || to.is_prefix())
    throw Error(Errc::invalid_argument,
                (from.is_prefix() ? from : to).text() + " names no object: give the key");
  const bool same_store = destination.copies_from(source);
  if (same_store && from.scheme == to.scheme && from.bucket == to.bucket && from.key == to.key)
    throw Error(Errc::invalid_argument, from.text() + " is its own destination: nothing to copy");
  const auto info = source.head_object(from);
  if (!info) throw Error(Errc::not_found, from.text() + " does not exist");
  if (same_store) {
    auto s = copy_in_store(from, destination, to, *info, options, whole_copy_limit);
    s.seconds = seconds_since(started);
    return s;
  }

  const auto check = source_check(source, from, *info);
  const auto size = info->size;
  // A multipart source is copied in its own part sizes, so that its ETag checks the parts.
  auto part = check.layout_part_size ? check.layout_part_size
              : options.part_size    ? options.part_size
                                     : part_size_for(size);
  part = std::max(part, (size + 9999) / 10000);
  const auto count = std::max<std::uint64_t>(1, (size + part - 1) / part);
  CopySummary summary;
  summary.files = 1;
  summary.bytes = size;
  summary.parts = count;
  PartProgress progress{options, size};
  InOrder hashed(check);
  const auto refuse = [&](const std::string& why) {
    throw Error(Errc::corrupt, from.text() +
                                   ": the bytes read are not those the source describes (" + why +
                                   "); nothing was completed at " + to.text() + ", run it again");
  };

  if (count == 1) {  // one request each way
    const auto bytes = source.get_range(from, 0, size);
    hashed.hash(0, transfer::as_bytes(bytes));
    if (const auto why = mismatch(check, &hashed, {md5_of(transfer::as_bytes(bytes))}, info->etag);
        !why.empty())
      refuse(why);
    destination.put_object(to, transfer::as_bytes(bytes), info->metadata);
    summary.bytes_sent = size;
    summary.seconds = seconds_since(started);
    return summary;
  }

  const std::string identity = "nubo store copy 1\n" + from.text() + "\n" + info->etag + "\n" +
                               std::to_string(size) + "\n" + std::to_string(part) + "\nto " +
                               to.text();
  auto journal = transfer::Journal::open(
      cache_dir(options.journal_dir) + "/copy-" +
          transfer::hex64(transfer::hash64(transfer::as_bytes(identity))) + ".journal",
      identity);
  std::string upload_id;
  std::vector<std::optional<Md5>> sent(count);  // the journal's parts: their MD5
  for (const auto& r : journal.loaded()) {
    if (r.type == kUploadId)
      upload_id.assign(reinterpret_cast<const char*>(r.payload.data()), r.payload.size());
    if (r.type == kPartDone && r.payload.size() == 4 + sizeof(Md5)) {
      const auto number = transfer::get_le<std::uint32_t>(r.payload.data());
      if (number >= 1 && number <= count) {
        Md5 m{};
        std::memcpy(m.data(), r.payload.data() + 4, m.size());
        sent[number - 1] = m;
      }
    }
  }
  std::vector<const Part*> held(count, nullptr);
  std::vector<Part> on_server;
  if (!upload_id.empty()) {
    try {
      on_server = destination.list_parts(to, upload_id);
      log::info("resuming the copy of " + from.text() + " to " + to.text() + ": " +
                std::to_string(on_server.size()) + " of " + std::to_string(count) +
                " parts are there");
    } catch (const Error& e) {
      if (e.code() != Errc::not_found) throw;
      upload_id.clear();  // expired or aborted: start again
    }
  }
  if (upload_id.empty()) {
    upload_id = destination.create_multipart(to, info->metadata);
    journal.reset();
    journal.append(kUploadId, transfer::as_bytes(upload_id));
    journal.commit(true);
    std::fill(sent.begin(), sent.end(), std::nullopt);
  }
  // A part is kept when the destination holds what the journal says was sent for it.
  for (const auto& p : on_server)
    if (p.number >= 1 && static_cast<std::uint64_t>(p.number) <= count && sent[p.number - 1] &&
        p.etag == md5_hex(*sent[p.number - 1]))
      held[p.number - 1] = &p;

  std::vector<Part> parts(count);
  std::vector<Md5> md5s(count);
  std::mutex journal_mutex;
  std::atomic<std::uint64_t> resumed{0};
  auto work = [&](std::size_t i) {
    const auto offset = i * part;
    const auto n = std::min(part, size - offset);
    // A part the destination holds is read again only when the whole content is hashed in
    // order; its MD5 is the journal's.
    if (held[i] && !check.in_order()) {
      parts[i] = *held[i];
      md5s[i] = *sent[i];
      resumed += n;
      progress.done += n;
      return;
    }
    std::string bytes;
    try {
      bytes = source.get_range(from, offset, n);
      if (check.in_order()) hashed.hash(i, transfer::as_bytes(bytes));
    } catch (...) {
      hashed.fail();
      throw;
    }
    md5s[i] = md5_of(transfer::as_bytes(bytes));
    if (held[i] && held[i]->etag == md5_hex(md5s[i])) {
      parts[i] = *held[i];
      resumed += n;
    } else {
      parts[i] = destination.upload_part(to, upload_id, static_cast<int>(i + 1),
                                         transfer::as_bytes(bytes), md5s[i]);
      progress.written += n;
      std::vector<std::byte> record(4 + sizeof(Md5));
      transfer::put_le<std::uint32_t>(record.data(), static_cast<std::uint32_t>(i + 1));
      std::memcpy(record.data() + 4, md5s[i].data(), sizeof(Md5));
      std::lock_guard lock(journal_mutex);
      journal.append(kPartDone, record);
      journal.commit(false);
    }
    progress.done += n;
  };
  try {
    run_parts(count, options.streams, work, [&] { return progress.tick(); });
  } catch (const Error& e) {
    if (e.code() == Errc::cancelled && !options.keep_partial)
      abort_upload(destination, to, upload_id, &journal, "the cancelled copy");
    throw;
  }
  if (const auto why = mismatch(check, check.in_order() ? &hashed : nullptr, md5s, info->etag);
      !why.empty()) {
    abort_upload(destination, to, upload_id, &journal, "the copy of altered bytes");
    refuse(why);
  }
  const bool checked =
      check.xxh3 ||
      (check.etag &&
       (check.etag->parts == 0 ||
        (check.layout_part_size != 0 && static_cast<std::uint64_t>(check.etag->parts) == count)));
  if (!checked)
    log::warn(from.text() + " carries no nubo checksum and its ETag (" + info->etag +
              ") cannot be checked: the copy is checked part by part at the destination only");
  destination.complete_multipart(to, upload_id, parts);
  journal.remove();
  progress.tick();
  summary.bytes_resumed = resumed;
  summary.bytes_sent = size - resumed;
  summary.seconds = seconds_since(started);
  return summary;
}

CopySummary copy_many(Store& source, Store& destination,
                      const std::vector<std::pair<ObjectUrl, ObjectUrl>>& pairs,
                      const transfer::CopyOptions& options) {
  if (pairs.size() == 1)  // its own progress, part by part, and all the streams
    return copy_between(source, pairs[0].first, destination, pairs[0].second, options);
  const auto started = Clock::now();
  const auto workers = static_cast<int>(
      std::min<std::size_t>(pairs.size(), static_cast<std::size_t>(std::max(1, options.streams))));
  auto each = options;
  each.streams = std::max(1, options.streams / std::max(1, workers));
  each.progress = nullptr;  // the callback is called from this thread only, below
  std::mutex mutex;
  CopySummary summary;
  std::atomic<std::uint64_t> done{0}, files_done{0};
  run_parts(
      pairs.size(), workers,
      [&](std::size_t i) {
        const auto s = copy_between(source, pairs[i].first, destination, pairs[i].second, each);
        std::lock_guard lock(mutex);
        add_summary(summary, s);
        done += s.bytes;
        ++files_done;
      },
      [&] {
        if (!options.progress) return true;
        transfer::Progress p;
        p.bytes_done = p.bytes_written = done;
        p.files_total = pairs.size();
        p.files_done = files_done;
        p.elapsed_seconds = seconds_since(started);
        p.rate = p.elapsed_seconds > 0 ? static_cast<double>(done) / p.elapsed_seconds : 0;
        return options.progress(p);
      });
  summary.seconds = seconds_since(started);
  return summary;
}

}  // namespace nubo::store
