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
#include "transfer/file_io.hpp"
#include "transfer/hash.hpp"
#include "transfer/paths.hpp"
#include "transfer/store/copy.hpp"
#include "transfer/store/copy_between.hpp"
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

// Relative path -> size, of every file under a place (a missing destination is empty).
std::map<std::string, std::uint64_t> listing(const Place& p, const CopyOptions& options,
                                             bool is_source) {
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
  // Filters apply to the source only: a destination file they leave out is still its own.
  const auto entries =
      is_source ? select({p.dir + "/."}, options.exclude, options.include) : select({p.dir + "/."});
  for (const auto& e : entries)
    if (e.kind == EntryKind::file) out[e.path] = e.size;
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
std::string local_hash(const Place& p, const std::string& rel, bool md5) {
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

}  // namespace

SyncSummary sync(const std::string& from, const std::string& to, const SyncOptions& options) {
  const auto started = Clock::now();
  const auto& copy_options = options.copy;
  if (!store::is_url(from) && !store::is_url(to))
    throw Error(Errc::invalid_argument, "neither '" + from + "' nor '" + to +
                                            "' is a store URL: for two local trees, use rsync");
  store::Options store_options;
  store_options.operation = store::Operation::sync;
  store_options.rate = copy_options.rate;
  store_options.server_side_encryption = copy_options.s3.server_side_encryption;
  store_options.kms_key_id = copy_options.s3.kms_key_id;
  auto source_options = store_options;
  source_options.profile = copy_options.s3.source_profile.empty() ? copy_options.s3.profile
                                                                  : copy_options.s3.source_profile;
  source_options.server_side_encryption.clear();
  source_options.kms_key_id.clear();
  store_options.profile = copy_options.s3.profile;
  const auto source = open_place(from, source_options);
  const auto destination = open_place(to, store_options);
  // The same place, or one inside the other, would copy onto what it reads.
  const bool same_store = source.local() == destination.local() &&
                          (source.local() || (source.url->scheme == destination.url->scheme &&
                                              source.url->bucket == destination.url->bucket &&
                                              destination.store->copies_from(*source.store)));
  if (same_store) {
    const auto a = source.local() ? source.dir + "/" : source.url->key;
    const auto b = destination.local() ? destination.dir + "/" : destination.url->key;
    if (a.rfind(b, 0) == 0 || b.rfind(a, 0) == 0)
      throw Error(Errc::invalid_argument,
                  a == b ? from + " is its own destination: nothing to sync"
                         : from + " and " + to + " overlap: one lies inside the other");
  }

  const auto have = listing(source, copy_options, true);
  const auto there = listing(destination, copy_options, false);
  std::vector<std::string> copies, deletions;
  SyncSummary summary;
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

  if (!source.local() && !destination.local()) {  // several objects at once
    std::vector<std::pair<store::ObjectUrl, store::ObjectUrl>> pairs;
    for (const auto& rel : copies) pairs.emplace_back(source.url_of(rel), destination.url_of(rel));
    const auto s = store::copy_many(*source.store, *destination.store, pairs, copy_options);
    summary.bytes_sent += s.bytes_sent;
    summary.bytes_server_side += s.bytes_server_side;
    copies.clear();
  }
  for (const auto& rel : copies) {
    CopySummary s;
    if (source.local()) {
      s = store::upload_file(*destination.store, source.path_of(rel), destination.url_of(rel),
                             copy_options);
    } else {
      store::make_parents(destination.path_of(rel));
      s = store::download_file(*source.store, source.url_of(rel), destination.path_of(rel),
                               copy_options);
    }
    summary.bytes_sent += s.bytes_sent;
    summary.bytes_server_side += s.bytes_server_side;
  }
  // Only now, every copy made: what the source no longer has goes.
  for (const auto& rel : deletions) {
    if (destination.local()) {
      if (::unlink(destination.path_of(rel).c_str()) != 0 && errno != ENOENT)
        throw_io("delete", destination.path_of(rel), errno);
    } else {
      destination.store->delete_object(destination.url_of(rel));
    }
  }
  summary.seconds = std::chrono::duration<double>(Clock::now() - started).count();
  return summary;
}

}  // namespace nubo::transfer
