#include "transfer/copy/copy.hpp"
#include "transfer/keys/object_cipher.hpp"
#include "transfer/store/s3/etag_check.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "common/log.hpp"
#include "nubo/error.hpp"
#include "transfer/file_io.hpp"
#include "transfer/hash.hpp"
#include "transfer/journal.hpp"
#include "transfer/keys/archive_cipher.hpp"
#include "transfer/paths.hpp"
#include "transfer/pipeline/target_dir.hpp"
#include "transfer/pipeline/walk.hpp"
#include "transfer/store/parts.hpp"

namespace nubo::store {
namespace {

using transfer::CopyOptions;
using transfer::CopySummary;
using transfer::Fd;
using Clock = std::chrono::steady_clock;

constexpr std::uint16_t kUploadId = 1;  // journal records
constexpr std::uint16_t kPartDone = 2;
constexpr std::uint16_t kKeyBlock = 3;  // an encrypted upload's data key, wrapped
const std::string kHashKey = kHashMetadata;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// An encrypted object's parts are whole sealed blocks.
std::uint64_t part_size(std::uint64_t size, const CopyOptions& options, bool encrypted) {
  const auto part = options.part_size ? options.part_size : part_size_for(size);
  if (!encrypted) return part;
  return (part + ObjectCipher::kBlock - 1) / ObjectCipher::kBlock * ObjectCipher::kBlock;
}

// A file's summary once every part is in: what was moved, what an earlier attempt had.
CopySummary finished(CopySummary summary, std::uint64_t resumed, std::uint64_t parts,
                     Clock::time_point started) {
  summary.bytes_resumed = resumed;
  summary.bytes_sent = summary.bytes - resumed;
  summary.parts = parts;
  summary.seconds = seconds_since(started);
  return summary;
}

}  // namespace

StorePlan plan_stores(const CopyOptions& options, Operation operation) {
  if (options.streams < 1 || options.streams > 64)
    throw Error(Errc::invalid_argument,
                "streams " + std::to_string(options.streams) + " is out of range: use 1 to 64");
  if (options.part_size != 0 && (options.part_size < (5 << 20) || options.part_size > (5ull << 30)))
    throw Error(Errc::invalid_argument, "the part size must be 5 MiB to 5 GiB (S3's limits)");
  if (!std::isfinite(options.rate) || options.rate < 0)
    throw Error(Errc::invalid_argument, "rate " + std::to_string(options.rate) +
                                            ": give bytes per second, or 0 for no limit");
  const auto& sse = options.s3.server_side_encryption;
  if (!sse.empty() && sse != "AES256" && sse != "aws:kms")
    throw Error(Errc::invalid_argument,
                "server-side encryption '" + printable(sse) + "': use AES256 or aws:kms");
  StorePlan plan;
  plan.destination.operation = operation;
  plan.destination.s3 = {options.s3.profile, sse, options.s3.kms_key_id};
  plan.destination.rate = options.rate;
  plan.source.operation = operation;
  plan.source.s3.profile =
      options.s3.source_profile.empty() ? options.s3.profile : options.s3.source_profile;
  plan.source.rate = options.rate;
  return plan;
}

CopySummary upload_file(Store& store, const std::string& path, const ObjectUrl& url,
                        const CopyOptions& options) {
  const auto started = Clock::now();
  if (url.key.empty() || url.key.back() == '/')
    throw Error(Errc::invalid_argument, url.text() + " names no object: give the key");
  auto file = transfer::open_read(path);
  const auto st = file.stat();
  if (!S_ISREG(st.st_mode)) throw Error(Errc::invalid_argument, path + " is not a file");
  const auto size = static_cast<std::uint64_t>(st.st_size);
  const auto hash = transfer::hash_on_disk(file.get(), size, path).hex();
  const auto keys = transfer::KeySource::parse(options.key_file);
  std::optional<ObjectCipher> cipher;
  const auto metadata = [&] {
    return cipher ? cipher->metadata(hash) : Metadata{{kHashKey, hash}};
  };
  // What goes up for the file's bytes from `offset`: themselves, or sealed.
  const auto body = [&](const std::vector<std::byte>& plain, std::uint64_t offset) {
    if (!cipher) return transfer::Bytes(plain);
    thread_local std::vector<std::byte> sealed;
    cipher->seal(plain, offset / ObjectCipher::kBlock, size, sealed);
    return transfer::Bytes(sealed);
  };
  const auto part = part_size(size, options, keys.encrypts());
  CopySummary summary;
  summary.files = 1;
  summary.bytes = size;
  PartProgress progress{options, size};

  if (size <= part) {  // one request
    std::vector<std::byte> plain(size);
    file.pread_exact(plain, 0, path + " (changed while read?)");
    if (!progress.tick()) throw Error(Errc::cancelled, "cancelled");
    if (keys.encrypts()) cipher = ObjectCipher::create(keys);
    store.put_object(url, body(plain, 0), metadata());
    summary.bytes_sent = size;
    summary.parts = 1;
    progress.done = progress.written = size;
    progress.tick();
    summary.seconds = seconds_since(started);
    return summary;
  }

  const auto count = (size + part - 1) / part;
  if (count > kMaxParts)
    throw Error(Errc::invalid_argument, path + ": " + std::to_string(count) + " parts of " +
                                            std::to_string(part) +
                                            " bytes exceed S3's 10,000; use a larger part size");
  const auto dir = cache_dir(options.journal_dir);
  std::string identity = "nubo s3 upload 1\n" + url.text() + "\n" + std::to_string(size) + "\n" +
                         std::to_string(transfer::mtime_ns(st)) + "\n" + std::to_string(part) +
                         "\n" + hash;
  if (keys.encrypts()) {  // appended piece by piece: GCC 12 warns falsely on "\n" + std::string
    identity += '\n';
    identity += keys.describe();
  }
  auto journal = transfer::Journal::open(
      dir + "/upload-" + transfer::hex64(transfer::hash64(transfer::as_bytes(identity))) +
          ".journal",
      identity);
  std::string upload_id;
  for (const auto& r : journal.loaded()) {
    if (r.type == kUploadId)
      upload_id.assign(reinterpret_cast<const char*>(r.payload.data()), r.payload.size());
    if (r.type == kKeyBlock && keys.encrypts())
      cipher = ObjectCipher::from_saved_keys(keys, r.payload, "the upload journal of " + path);
  }
  if (keys.encrypts() && !cipher) upload_id.clear();  // its parts were sealed with a key now lost
  std::vector<Part> held;
  if (!upload_id.empty()) {
    try {
      held = store.list_parts(url, upload_id);
      log::info("resuming the upload of " + path + " to " + url.text() + ": the server holds " +
                std::to_string(held.size()) + " of " + std::to_string(count) + " parts");
    } catch (const Error& e) {
      if (e.code() != Errc::not_found) throw;
      upload_id.clear();  // expired or aborted: start again
    }
  }
  if (upload_id.empty()) {
    if (keys.encrypts()) cipher = ObjectCipher::create(keys);
    upload_id = store.create_multipart(url, metadata());
    journal.reset();
    journal.append(kUploadId, transfer::as_bytes(upload_id));
    if (cipher) journal.append(kKeyBlock, cipher->saved_keys());
    journal.commit(true);
  }
  std::vector<Part> parts(count);
  std::vector<const Part*> on_server(count, nullptr);
  for (const auto& p : held)
    if (p.number >= 1 && static_cast<std::uint64_t>(p.number) <= count)
      on_server[static_cast<std::size_t>(p.number - 1)] = &p;
  std::atomic<std::uint64_t> resumed{0};
  auto work = [&](std::size_t i) {
    const auto offset = i * part;
    const auto n = std::min(part, size - offset);
    thread_local std::vector<std::byte> buffer;
    buffer.resize(n);
    file.pread_exact(buffer, offset, path + " (changed while read?)");
    const auto bytes = body(buffer, offset);
    const auto md5 = md5_of(bytes);
    const int number = static_cast<int>(i + 1);
    if (const Part* p = on_server[i]; p && p->size == bytes.size() && p->etag == md5_hex(md5)) {
      parts[i] = *p;
      resumed += n;
    } else {
      parts[i] = store.upload_part(url, upload_id, number, bytes, md5);
      progress.written += n;
    }
    progress.done += n;
  };
  try {
    run_parts(count, options.streams, work, [&] { return progress.tick(); });
  } catch (const Error& e) {
    if (e.code() == Errc::cancelled && !options.keep_partial)
      abort_upload(store, url, upload_id, &journal, "the cancelled upload");
    throw;
  }
  store.complete_multipart(url, upload_id, parts);
  journal.remove();
  progress.tick();
  return finished(summary, resumed, count, started);
}

namespace {

// A download into `leaf` of the folder `dir_fd` (shown as `dir`): its partial file, its journal
// and its rename all relative to that descriptor, none through a link.
CopySummary download_at(Store& store, const ObjectUrl& url, const ObjectInfo& info, int dir_fd,
                        const std::string& dir, const std::string& leaf,
                        const CopyOptions& options) {
  const auto started = Clock::now();
  const auto cipher = ObjectCipher::for_object(transfer::KeySource::parse(options.key_file),
                                               info.metadata, url.text());
  const auto size = cipher ? ObjectCipher::plain_size(info.size, url.text()) : info.size;
  const std::string path = dir + "/" + leaf;
  const std::string tmp_name = transfer::temp_name(leaf);
  const std::string tmp = dir + "/" + tmp_name;
  const auto part = part_size(size, options, cipher.has_value());
  const auto count = std::max<std::uint64_t>(1, (size + part - 1) / part);
  const std::string identity = "nubo s3 download 1\n" + url.text() + "\n" + info.etag + "\n" +
                               std::to_string(size) + "\n" + std::to_string(part);
  const auto journal_name =
      ".nubo-s3-" + transfer::hex64(transfer::hash64(transfer::as_bytes(leaf))) + ".journal";
  auto journal =
      transfer::Journal::open_at(dir_fd, journal_name, dir + "/" + journal_name, identity);
  std::vector<char> done(count, 0);
  for (const auto& r : journal.loaded())
    if (r.type == kPartDone && r.payload.size() == 8) {
      const auto i = transfer::get_le<std::uint64_t>(r.payload.data());
      if (i < count) done[i] = 1;
    }
  struct stat kept {};
  if (::fstatat(dir_fd, tmp_name.c_str(), &kept, AT_SYMLINK_NOFOLLOW) != 0) {
    // No partial file: whatever the journal says was written is not there (a run killed after
    // its rename, before it removed the journal, left it): start over.
    std::fill(done.begin(), done.end(), 0);
    journal.reset();
  }
  Fd out = transfer::open_write(tmp_name, 0600, dir_fd, tmp);
  if (std::none_of(done.begin(), done.end(), [](char d) { return d; })) out.truncate(0);
  out.truncate(size);
  CopySummary summary;
  summary.files = 1;
  summary.bytes = size;
  PartProgress progress{options, size};
  std::uint64_t resumed = 0;
  std::vector<std::size_t> todo;
  for (std::size_t i = 0; i < count; ++i) {
    if (done[i]) {
      resumed += std::min(part, size - i * part);
    } else {
      todo.push_back(i);
    }
  }
  progress.done = resumed;
  std::mutex journal_mutex;
  std::size_t since_commit = 0;
  auto work = [&](std::size_t k) {
    const auto i = todo[k];
    const auto offset = i * part;
    const auto n = std::min(part, size - offset);
    if (cipher) {
      const auto [begin, end] = ObjectCipher::sealed_range(offset, n, size);
      const auto sealed = store.get_range(url, begin, end - begin);
      thread_local std::vector<std::byte> plain;
      cipher->open(transfer::as_bytes(sealed), offset / ObjectCipher::kBlock, size, plain,
                   url.text());
      out.pwrite_all(plain, offset);
    } else {
      out.pwrite_all(transfer::as_bytes(store.get_range(url, offset, n)), offset);
    }
    progress.written += n;
    progress.done += n;
    std::lock_guard lock(journal_mutex);
    std::vector<std::byte> record(8);
    transfer::put_le<std::uint64_t>(record.data(), i);
    journal.append(kPartDone, record);
    // Records only after their data is durable: a journal never describes bytes not on disk.
    if (++since_commit >= 4) {
      if (options.sync) out.datasync();
      journal.commit(options.sync);
      since_commit = 0;
    }
  };
  try {
    run_parts(todo.size(), options.streams, work, [&] { return progress.tick(); });
  } catch (...) {
    try {
      if (options.sync) out.datasync();
      journal.commit(options.sync);
    } catch (const Error& e) {
      log::warn(std::string("keeping the download's progress: ") + e.what());
    }
    throw;
  }
  // The whole file, checked before it takes its name: against the XXH3-128 nubo stored with
  // it, or, for an object another client uploaded, against its ETag.
  const auto refuse = [&](const std::string& expected, const std::string& got) {
    out = Fd();
    ::unlinkat(dir_fd, tmp_name.c_str(), 0);
    journal.remove();
    throw Error(Errc::corrupt, url.text() + ": the downloaded content does not match its " +
                                   expected + " (" + got +
                                   " downloaded); nothing was written, run it again");
  };
  if (cipher) {
    const auto expected = cipher->plain_hash(info.metadata, url.text());
    const auto got = transfer::hash_on_disk(out.get(), size, tmp).hex();
    if (got != expected) refuse("sealed XXH3-128", got);
  } else if (const auto stored = info.metadata.find(kHashKey); stored != info.metadata.end()) {
    const auto got = transfer::hash_on_disk(out.get(), size, tmp).hex();
    if (got != stored->second) refuse("XXH3-128 " + stored->second.substr(0, 32), got);
  } else {
    const auto verdict = s3::check_etag(store, url, info, out);
    if (verdict.result == s3::EtagVerdict::Result::mismatched)
      refuse("ETag " + info.etag, verdict.detail);
    if (verdict.result == s3::EtagVerdict::Result::not_checkable)
      log::warn(url.text() + " carries no nubo checksum and " + verdict.detail +
                ": only its size was checked");
  }
  // Written unreadable to others while incomplete; in place, as any new file is.
  if (::fchmod(out.get(), static_cast<mode_t>(transfer::default_file_mode())) != 0)
    transfer::throw_io("set the permissions of", tmp, errno);
  if (options.sync) out.datasync();
  out.close();
  if (::renameat(dir_fd, tmp_name.c_str(), dir_fd, leaf.c_str()) != 0)
    transfer::throw_io("rename to " + path, tmp, errno);
  if (options.sync && ::fsync(dir_fd) != 0 && errno != EINVAL)
    transfer::throw_io("fsync", dir, errno);
  journal.remove();
  progress.tick();
  return finished(summary, resumed, count, started);
}

// An object that holds a symlink (upload_link): restored as a link at `leaf` of `dir_fd` when
// links are stored, else left out; either way counted. `rel`: its path below the tree it lands
// in, which its target may not leave (paths::check_link).
CopySummary land_link(Store& store, const ObjectUrl& url, const ObjectInfo& info, int dir_fd,
                      const std::string& dir, const std::string& leaf, const std::string& rel,
                      const CopyOptions& options) {
  CopySummary summary;
  if (options.symlinks != transfer::Symlinks::store) {
    log::warn(url.text() +
              " holds a symlink (stored with --links): skipped; give --links to "
              "restore it");
    summary.links_skipped = 1;
    return summary;
  }
  if (info.size == 0 || info.size > transfer::format::kMaxPathLength)
    throw Error(Errc::corrupt, url.text() + ": a stored symlink of " + std::to_string(info.size) +
                                   " bytes; a target is 1 to 4096");
  const auto target = store.get_range(url, 0, info.size);
  try {  // an absolute target, or one that climbs out of the tree, is never made: as unpack
    transfer::paths::check_link(rel, target);
  } catch (const Error& e) {
    log::warn(url.text() + ": " + e.what() + "; skipped");
    summary.links_skipped = 1;
    return summary;
  }
  transfer::make_symlink_at(dir_fd, leaf, target, dir + "/" + leaf);
  summary.links_stored = 1;
  return summary;
}

// The object, as a file or (stored with --links) a link.
CopySummary land(Store& store, const ObjectUrl& url, int dir_fd, const std::string& dir,
                 const std::string& leaf, const std::string& rel, const CopyOptions& options) {
  const auto info = store.head_object(url);
  if (!info) throw Error(Errc::not_found, url.text() + " does not exist");
  if (info->metadata.contains(kSymlinkMetadata))
    return land_link(store, url, *info, dir_fd, dir, leaf, rel, options);
  return download_at(store, url, *info, dir_fd, dir, leaf, options);
}

}  // namespace

std::vector<transfer::SourceEntry> copy_walk(const std::string& root, const CopyOptions& options,
                                             CopySummary& counted) {
  if (options.symlinks == transfer::Symlinks::store && !options.key_file.empty())
    throw Error(Errc::invalid_argument,
                "links stored as links would keep their targets in the clear: encrypted copies "
                "follow or skip links");
  transfer::LinkCounts counts;
  const transfer::LinkRules rules{options.symlinks, options.follow_outside, &counts};
  auto walk = transfer::walk_sources(
      {root}, {}, transfer::PathFilter(options.exclude, options.include), &rules);
  counted.links_followed += counts.followed;
  counted.links_stored += counts.stored;
  counted.links_skipped += counts.skipped;
  std::vector<transfer::SourceEntry> out;
  for (auto& e : walk.entries)
    if (e.meta.kind == transfer::format::EntryKind::file ||
        e.meta.kind == transfer::format::EntryKind::symlink)
      out.push_back(std::move(e));
  return out;
}

CopySummary upload_link(Store& store, const std::string& target, const ObjectUrl& url) {
  if (target.empty() || target.size() > transfer::format::kMaxPathLength)
    throw Error(Errc::invalid_argument,
                url.text() + ": a symlink's target of " + std::to_string(target.size()) + " bytes");
  const auto started = Clock::now();
  store.put_object(
      url, transfer::as_bytes(target),
      {{kSymlinkMetadata, "1"}, {kHashKey, transfer::hash128(transfer::as_bytes(target)).hex()}});
  CopySummary summary;  // the link is counted by the walk that found it (copy_walk)
  summary.seconds = std::chrono::duration<double>(Clock::now() - started).count();
  return summary;
}

CopySummary download_file(Store& store, const ObjectUrl& url, const std::string& path,
                          const CopyOptions& options) {
  const auto slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "."
                          : slash == 0               ? "/"
                                                     : path.substr(0, slash);
  const std::string leaf = slash == std::string::npos ? path : path.substr(slash + 1);
  if (leaf.empty() || leaf == "." || leaf == "..")
    throw Error(Errc::invalid_argument, "'" + path + "' names no file");
  // The folder the user named, links and all: it is theirs.
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) transfer::throw_io("open directory", dir, errno);
  const Fd folder(fd, dir);
  return land(store, url, folder.get(), dir, leaf, leaf, options);
}

CopySummary download_into(Store& store, const ObjectUrl& url, transfer::TargetDir& root,
                          const std::string& rel, const CopyOptions& options) {
  transfer::paths::check_entry(rel);  // no absolute path, no '..'
  const auto leaf = std::string(transfer::paths::leaf(rel));
  if (transfer::is_temp_name(leaf) || leaf.starts_with(".nubo-s3-"))
    throw Error(Errc::invalid_argument,
                url.text() + ": its name is one nubo keeps for its own partial files; not written");
  const int dir_fd = root.parent(rel, true);
  const auto parent = transfer::paths::parent(rel);
  return land(store, url, dir_fd, parent.empty() ? root.root() : root.full(parent), leaf, rel,
              options);
}

}  // namespace nubo::store
