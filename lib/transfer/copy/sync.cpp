// nubo::transfer::sync: what is new or changed from a local tree or a store prefix to another,
// by size and content (nubo's XXH3-128, or an ETag that is an MD5), with the copies of
// copy.hpp and copy_between.hpp; deletions only once every copy has succeeded.
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <map>
#include <optional>

#include "common/log.hpp"
#include "nubo/copy.hpp"
#include "nubo/error.hpp"
#include "transfer/copy/copy.hpp"
#include "transfer/copy/copy_between.hpp"
#include "transfer/copy/places.hpp"
#include "transfer/file_io.hpp"
#include "transfer/hash.hpp"
#include "transfer/paths.hpp"
#include "transfer/pipeline/target_dir.hpp"
#include "transfer/store/md5.hpp"
#include "transfer/store/parts.hpp"
#include "transfer/store/s3/etag.hpp"
#include "transfer/store/store.hpp"

namespace nubo::transfer {
namespace {

using Clock = std::chrono::steady_clock;

// One end of a sync: a local directory, or a prefix of a store.
struct Place {
  std::string text;
  std::string dir;  // local
  std::optional<store::ObjectUrl> url;
  std::unique_ptr<store::Store> store;
  // Local links taken as links (Symlinks::store): relative path -> target.
  std::map<std::string, std::string> links;
  bool local() const { return !url.has_value(); }
  std::string path_of(const std::string& rel) const { return dir + "/" + rel; }
  store::ObjectUrl url_of(const std::string& rel) const { return url->with_key(url->key + rel); }
};

Place open_place(const std::string& text, store::Options options) {
  Place p;
  p.text = text;
  if (!store::is_url(text)) {
    p.dir = text;
    while (p.dir.size() > 1 && p.dir.back() == '/') p.dir.pop_back();
    return p;
  }
  auto url = store::parse_url(text);
  if (!url.is_prefix())
    throw Error(Errc::invalid_argument,
                text + " names an object: sync takes prefixes (" + text + "/, with its '/')");
  p.store = store::open(url, options);
  p.url = std::move(url);
  return p;
}

// Relative path -> size, of every file under a place (a missing destination is empty); a local
// source's links as the options say (counted into `counted`), a destination's taken as links
// when links are stored.
std::map<std::string, std::uint64_t> listing(Place& p, const CopyOptions& options, bool is_source,
                                             CopySummary& counted) {
  std::map<std::string, std::uint64_t> out;
  if (!p.local()) {
    std::vector<std::pair<std::string, std::uint64_t>> objects;
    try {
      objects = p.store->list_objects(*p.url);
    } catch (const Error& e) {
      // A file:// destination whose folder is not made yet holds nothing, as an S3 prefix.
      // (A missing bucket stays an error: a dry run would otherwise list everything.)
      if (e.code() != Errc::not_found || is_source || p.url->scheme != "file") throw;
    }
    for (const auto& [key, size] : objects) {
      const auto rest = key.substr(p.url->key.size());
      if (rest.empty() || rest.back() == '/') continue;  // a "directory" marker
      paths::check_entry(rest);                          // no absolute paths, no '..'
      out[rest] = size;
    }
    return out;
  }
  struct stat st {};
  if (::stat(p.dir.c_str(), &st) != 0) {
    if (errno == ENOENT && !is_source) return out;
    throw_io("read", p.dir, errno);
  }
  if (!S_ISDIR(st.st_mode)) throw Error(Errc::invalid_argument, p.dir + " is not a directory");
  if (is_source) {  // filters apply to the source only: a destination's file is still its own
    for (const auto& e : store::copy_walk(p.dir + "/.", options, counted)) {
      const bool link = e.meta.kind == format::EntryKind::symlink;
      out[e.meta.path] = link ? e.meta.link_target.size() : e.meta.size;
      if (link) p.links[e.meta.path] = e.meta.link_target;
    }
    return out;
  }
  const bool links_kept = options.symlinks == Symlinks::store;
  for (const auto& e : select({p.dir + "/."})) {
    if (e.kind == EntryKind::file) out[e.path] = e.size;
    if (e.kind == EntryKind::symlink && links_kept) {
      out[e.path] = e.link_target.size();
      p.links[e.path] = e.link_target;
    }
  }
  return out;
}

// What an object says of its content: nubo's XXH3-128 (hex) in its metadata, the MD5 its ETag
// names (an object put whole, not under SSE-KMS or SSE-C), and the ETag itself.
struct Content {
  std::optional<std::string> xxh3, md5, etag;
};

Content content_of(const Place& p, const std::string& rel) {
  Content c;
  const auto info = p.store->head_object(p.url_of(rel));
  if (!info) return c;
  if (const auto h = info->metadata.find(store::kHashMetadata); h != info->metadata.end())
    c.xxh3 = h->second;
  c.etag = info->etag;
  if (!s3::etag_is_not_content_md5(info->server_side_encryption, info->customer_key))
    if (const auto e = s3::parse_etag_md5(info->etag); e && e->parts == 0) c.md5 = e->md5;
  return c;
}

// A local file's XXH3-128 or, with `md5`, its MD5 (hex): one read, of the hash it is compared by.
// A link taken as a link: its target's, as its object holds it.
std::string local_hash(const Place& p, const std::string& rel, bool md5) {
  if (const auto link = p.links.find(rel); link != p.links.end())
    return md5 ? store::md5_hex(store::md5_of(as_bytes(link->second)))
               : hash128(as_bytes(link->second)).hex();
  const auto fd = open_read(p.path_of(rel));
  const auto size = static_cast<std::uint64_t>(fd.stat().st_size);
  if (!md5) return hash_on_disk(fd.get(), size, p.path_of(rel)).hex();
  store::Md5Stream stream;
  std::vector<std::byte> buffer(1 << 20);
  for (std::uint64_t at = 0; at < size;) {
    const auto n = fd.pread(buffer, at);
    if (n == 0) break;
    stream.update(Bytes(buffer.data(), n));
    at += n;
  }
  return store::md5_hex(stream.digest());
}

// Whether the destination's file is the source's, both of the same size. The objects are asked
// first (a HEAD each); a local file is then hashed once, by what its object offers: nubo's
// XXH3-128, else the MD5 of an object another client put whole. Two objects compare by
// XXH3-128, else MD5, else the same ETag. Unknown counts as changed.
bool same_content(const Place& from, const Place& to, const std::string& rel) {
  if (from.local() || to.local()) {
    const auto& local = from.local() ? from : to;
    const auto remote = content_of(from.local() ? to : from, rel);
    if (remote.xxh3) return local_hash(local, rel, false) == *remote.xxh3;
    if (remote.md5) return local_hash(local, rel, true) == *remote.md5;
    return false;
  }
  const auto source = content_of(from, rel), dest = content_of(to, rel);
  if (source.xxh3 && dest.xxh3) return *source.xxh3 == *dest.xxh3;
  if (source.md5 && dest.md5) return *source.md5 == *dest.md5;
  return source.etag && dest.etag && *source.etag == *dest.etag;
}

// The folder of this machine a place is: a local path, or a file:// URL's.
std::string local_dir(const Place& p) {
  return p.local() ? p.dir : "/" + p.url->key;
}

// Moves each of `rels` from `destination` to the same path under `backup`: on this machine a
// rename between folders reached without following links; in a store, a copy (by the store, or
// through this machine), the original then replaced or deleted by the sync itself.
void move_to_backup(const Place& destination, const Place& backup,
                    const std::vector<std::string>& rels, const CopyOptions& options) {
  if (rels.empty()) return;
  if (destination.local()) {
    TargetDir from(local_dir(destination), false, 0777), to(local_dir(backup), false, 0777);
    for (const auto& rel : rels) {
      const std::string leaf(paths::leaf(rel));
      const int from_fd = from.parent(rel, false);
      const int to_fd = to.parent(rel, true);
      if (::renameat(from_fd, leaf.c_str(), to_fd, leaf.c_str()) != 0) {
        if (errno == ENOENT) continue;  // gone meanwhile: nothing to keep
        if (errno == EXDEV)
          throw Error(Errc::invalid_argument, "the backup folder " + backup.text +
                                                  " is on another file system than " +
                                                  destination.text + ": give one beside it");
        throw_io("move to the backup folder", from.full(rel), errno);
      }
    }
    return;
  }
  std::vector<std::pair<store::ObjectUrl, store::ObjectUrl>> pairs;
  for (const auto& rel : rels) pairs.emplace_back(destination.url_of(rel), backup.url_of(rel));
  auto quiet = options;
  quiet.progress = nullptr;
  store::copy_many(*destination.store, *destination.store, pairs, quiet);
}

}  // namespace

SyncSummary sync(const std::string& from, const std::string& to, const SyncOptions& options) {
  const auto started = Clock::now();
  const auto& copy_options = options.copy;
  if (!store::is_url(from) && !store::is_url(to))
    throw Error(Errc::invalid_argument, "neither '" + from + "' nor '" + to +
                                            "' is a store URL: for two local trees, use rsync");
  // The same checks as a copy's: a rate of -1 or NaN is refused here too, not taken as "none".
  const auto plan = store::plan_stores(copy_options, store::Operation::sync);
  if (options.max_delete < -1)
    throw Error(Errc::invalid_argument, "max_delete " + std::to_string(options.max_delete) +
                                            ": give a number of files, or -1 for no limit");
  auto source = open_place(from, plan.source);
  auto destination = open_place(to, plan.destination);
  // The same place, or one inside the other, however spelled: it would copy onto what it reads
  // and, with --delete, delete what it copies from.
  const auto source_key = store::place_key(from, source.store.get());
  const auto destination_key = store::place_key(to, destination.store.get());
  store::check_apart(from, source_key, to, destination_key);
  std::optional<Place> backup;
  if (!options.backup_dir.empty()) {
    backup = open_place(options.backup_dir, plan.destination);
    const auto backup_key = store::place_key(options.backup_dir, backup->store.get());
    store::check_apart(options.backup_dir, backup_key, to, destination_key);
    store::check_apart(options.backup_dir, backup_key, from, source_key);
    // A local destination's files are renamed into a folder of this machine; a store's objects
    // are copied within it (a file:// store's too, metadata and all).
    if (destination.local() ? !backup_key.starts_with("local:")
                            : backup->local() || backup->url->scheme != destination.url->scheme ||
                                  backup->url->bucket != destination.url->bucket ||
                                  backup->store->service() != destination.store->service())
      throw Error(Errc::invalid_argument,
                  "--backup-dir " + options.backup_dir + " must be where " + to +
                      " is: a folder of this machine for a local destination, a prefix of the "
                      "same bucket (or file:// folder) for a store");
  }

  CopySummary links;  // the source tree's links, counted as it is walked
  const auto have = listing(source, copy_options, true, links);
  const auto there = listing(destination, copy_options, false, links);
  std::vector<std::string> copies, deletions;
  SyncSummary summary;
  const auto count_links = [&](const CopySummary& s) {
    summary.links_followed += s.links_followed;
    summary.links_stored += s.links_stored;
    summary.links_skipped += s.links_skipped;
  };
  count_links(links);
  for (const auto& [rel, size] : have) {
    const auto it = there.find(rel);
    if (it != there.end() && it->second == size && same_content(source, destination, rel)) {
      ++summary.unchanged;
      continue;
    }
    copies.push_back(rel);
    summary.bytes_copied += size;
  }
  if (options.delete_extra)
    for (const auto& [rel, size] : there)
      if (!have.count(rel)) deletions.push_back(rel);
  // Refused before any change, a dry run included, so that it predicts the real run.
  if (options.delete_extra && have.empty() && !there.empty() && !options.allow_empty_source)
    throw Error(Errc::invalid_argument,
                from + " holds nothing" +
                    (copy_options.exclude.empty() && copy_options.include.empty()
                         ? std::string()
                         : " that the filters let through") +
                    ": deleting what it lacks would remove all " + std::to_string(there.size()) +
                    " files of " + to +
                    "; check the source, or allow it if that is meant (allow_empty_source, "
                    "--allow-empty-source)");
  if (options.max_delete >= 0 && deletions.size() > static_cast<std::uint64_t>(options.max_delete))
    throw Error(Errc::invalid_argument,
                "the sync would delete " + std::to_string(deletions.size()) + " files of " + to +
                    ", more than the " + std::to_string(options.max_delete) +
                    " allowed (max_delete, --max-delete); nothing was changed");
  summary.copied = copies.size();
  summary.deleted = deletions.size();
  for (const auto& rel : copies) summary.changes.push_back("copy " + rel);
  for (const auto& rel : deletions) summary.changes.push_back("delete " + rel);
  if (options.change)
    for (const auto& c : summary.changes) options.change(c);
  if (options.dry_run) {
    summary.seconds = std::chrono::duration<double>(Clock::now() - started).count();
    return summary;
  }

  // What is about to be replaced or deleted, moved to the backup first.
  if (backup) {
    std::vector<std::string> moving = deletions;
    for (const auto& rel : copies)
      if (there.count(rel)) moving.push_back(rel);
    move_to_backup(destination, *backup, moving, copy_options);
    summary.backed_up = moving.size();
  }
  if (!source.local() && !destination.local()) {  // several objects at once
    std::vector<std::pair<store::ObjectUrl, store::ObjectUrl>> pairs;
    for (const auto& rel : copies) pairs.emplace_back(source.url_of(rel), destination.url_of(rel));
    const auto s = store::copy_many(*source.store, *destination.store, pairs, copy_options);
    summary.bytes_sent += s.bytes_sent;
    summary.bytes_server_side += s.bytes_server_side;
    copies.clear();
  }
  // A local destination is written and pruned only through folders reached without following
  // a link: a symlink planted in it never takes a file, or a deletion, outside it.
  std::optional<TargetDir> target;
  if (destination.local() && (!copies.empty() || !deletions.empty()))
    target.emplace(destination.dir, false, 0777);
  for (const auto& rel : copies) {
    CopySummary s;
    if (const auto link = source.links.find(rel); link != source.links.end()) {
      store::upload_link(*destination.store, link->second, destination.url_of(rel));
    } else if (source.local()) {
      s = store::upload_file(*destination.store, source.path_of(rel), destination.url_of(rel),
                             copy_options);
    } else {
      s = store::download_into(*source.store, source.url_of(rel), *target, rel, copy_options);
      count_links(s);  // objects holding links: restored or skipped
    }
    summary.bytes_sent += s.bytes_sent;
    summary.bytes_server_side += s.bytes_server_side;
  }
  // Only now, every copy made: what the source no longer has goes.
  for (const auto& rel : deletions) {
    if (target)
      target->remove(rel, paths::leaf(rel));
    else
      destination.store->delete_object(destination.url_of(rel));
  }
  summary.seconds = std::chrono::duration<double>(Clock::now() - started).count();
  return summary;
}

}  // namespace nubo::transfer
