#include "transfer/store/file/file_store.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <filesystem>

#include "common/crypto.hpp"
#include "common/json.hpp"
#include "common/small_file.hpp"
#include "common/text.hpp"
#include "nubo/error.hpp"
#include "transfer/file_io.hpp"
#include "transfer/rate.hpp"

namespace nubo::file_store {
namespace {

namespace fs = std::filesystem;
using store::Metadata;
using store::ObjectInfo;
using store::ObjectUrl;
using store::Part;
using transfer::Fd;

constexpr std::string_view kMetaSuffix = ".nubo-meta";
constexpr std::string_view kPutInfix = ".nubo-put-";
constexpr std::string_view kUploadPrefix = ".nubo-upload-";
constexpr std::uint64_t kMaxMetaBytes = 64 << 10;  // S3 allows 2 KiB of metadata

std::string path_of(const ObjectUrl& url) {
  return "/" + url.key;
}

std::string parent_of(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string leaf_of(const std::string& path) {
  return path.substr(path.rfind('/') + 1);
}

std::string random_hex(std::size_t bytes) {
  std::array<std::byte, 16> r{};
  crypto::random_bytes(std::span(r.data(), std::min(bytes, r.size())));
  return text::hex(r.data(), std::min(bytes, r.size()));
}

std::string meta_path(const std::string& path) {
  return parent_of(path) + "/." + leaf_of(path) + std::string(kMetaSuffix);
}

std::string staging_dir(const ObjectUrl& url, const std::string& upload_id) {
  if (upload_id.size() != 32 ||
      upload_id.find_first_not_of("0123456789abcdef") != std::string::npos)
    throw Error(Errc::invalid_argument, "'" + upload_id + "' is not an upload ID of this store");
  return parent_of(path_of(url)) + "/" + std::string(kUploadPrefix) + upload_id;
}

// Whether a directory entry is the store's own: metadata, a file being put, an upload's parts.
bool is_own(const std::string& leaf) {
  if (leaf.empty() || leaf[0] != '.') return false;
  return leaf.rfind(kUploadPrefix, 0) == 0 || leaf.find(kPutInfix) != std::string::npos ||
         (leaf.size() > kMetaSuffix.size() &&
          leaf.compare(leaf.size() - kMetaSuffix.size(), kMetaSuffix.size(), kMetaSuffix) == 0);
}

void make_dirs(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec && !fs::is_directory(dir))
    throw Error(ec == std::errc::permission_denied ? Errc::invalid_argument : Errc::io,
                "cannot create the directory " + dir + ": " + ec.message());
}

// A missing file or directory: not_found naming it; anything else: io.
[[noreturn]] void fail(const std::string& action, const std::string& path, int err) {
  if (err == ENOENT || err == ENOTDIR)
    throw Error(Errc::not_found, "file://" + path + " does not exist (" + action + ")");
  transfer::throw_io(action, path, err);
}

std::string meta_text(const struct stat& st, const Metadata& metadata) {
  nlohmann::json j;
  j["size"] = static_cast<std::uint64_t>(st.st_size);
  j["mtime_ns"] = transfer::mtime_ns(st);
  j["metadata"] = metadata;
  return j.dump();
}

// Writes a file beside `path` under a temporary name: `fill` writes its bytes, it is made
// durable, then `finish` puts it in place. On any failure the temporary name goes.
template <typename Fill, typename Finish>
void write_beside(const std::string& path, const Fill& fill, const Finish& finish) {
  const auto tmp = parent_of(path) + "/." + leaf_of(path) + std::string(kPutInfix) + random_hex(8);
  try {
    auto out = transfer::open_write(tmp, 0600);
    out.truncate(0);
    fill(out);
    out.datasync();
    finish(out, tmp);
    out.close();
  } catch (...) {
    transfer::remove_file(tmp);
    throw;
  }
}

// Writes `bytes` to `path`, durable, renamed into place.
void write_whole(const std::string& path, transfer::Bytes bytes) {
  write_beside(
      path, [&](const Fd& out) { out.write_all(bytes); },
      [&](const Fd&, const std::string& tmp) { transfer::rename_file(tmp, path); });
}

// The object `tmp` (written, fsynced) becomes `path` with its metadata: the metadata first, so
// that the file never appears without it; a crash between the two leaves metadata that does not
// describe the file, which head_object then ignores.
void publish(const Fd& file, const std::string& tmp, const std::string& path,
             const Metadata& metadata) {
  if (::fchmod(file.get(), static_cast<mode_t>(transfer::default_file_mode())) != 0)
    transfer::throw_io("set the permissions of", tmp, errno);
  const auto st = file.stat();
  if (metadata.empty()) {
    transfer::remove_file(meta_path(path));
  } else {
    write_whole(meta_path(path), transfer::as_bytes(meta_text(st, metadata)));
  }
  transfer::rename_file(tmp, path);
  transfer::sync_parent_dir(path);
}

class FileStore : public store::Store {
 public:
  explicit FileStore(const store::Options& options)
      : limiter_(std::make_shared<transfer::RateLimiter>(options.rate)) {}

  std::string service() const override { return "local"; }

  void create_bucket(const std::string& bucket) override {
    if (!bucket.empty())
      throw Error(Errc::invalid_argument, "file:// has no buckets: '" + bucket + "'");
  }

  void put_object(const ObjectUrl& url, transfer::Bytes body, const Metadata& metadata) override {
    const auto path = object_path(url);
    make_dirs(parent_of(path));
    pace(body.size());
    write_beside(
        path, [&](const Fd& out) { out.write_all(body); },
        [&](const Fd& out, const std::string& tmp) { publish(out, tmp, path, metadata); });
  }

  std::optional<ObjectInfo> head_object(const ObjectUrl& url) override {
    const auto path = object_path(url);
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) {
      if (errno == ENOENT || errno == ENOTDIR) return std::nullopt;
      transfer::throw_io("look at", path, errno);
    }
    if (!S_ISREG(st.st_mode)) return std::nullopt;
    ObjectInfo info;
    info.size = static_cast<std::uint64_t>(st.st_size);
    info.etag = std::to_string(info.size) + "-" + std::to_string(transfer::mtime_ns(st));
    info.metadata = metadata_of(path, st);
    return info;
  }

  std::optional<ObjectInfo> head_part(const ObjectUrl&, int) override { return std::nullopt; }

  std::string get_range(const ObjectUrl& url, std::uint64_t offset, std::uint64_t size) override {
    const auto path = object_path(url);
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) fail("open", path, errno);
    Fd in(fd, path);
    pace(size);
    std::string out(size, '\0');
    in.pread_exact(transfer::MutableBytes(reinterpret_cast<std::byte*>(out.data()), out.size()),
                   offset, "file://" + path + " (shorter than the range asked for)");
    return out;
  }

  void delete_object(const ObjectUrl& url) override {
    const auto path = object_path(url);
    transfer::remove_file(path);
    transfer::remove_file(meta_path(path));
  }

  std::vector<std::pair<std::string, std::uint64_t>> list_objects(const ObjectUrl& prefix,
                                                                  std::size_t limit) override {
    const auto slash = prefix.key.rfind('/');
    const std::string dir = slash == std::string::npos ? "/" : "/" + prefix.key.substr(0, slash);
    std::error_code ec;
    if (!fs::is_directory(dir, ec))
      throw Error(Errc::not_found, "file://" + dir + " is not a directory");
    std::vector<std::pair<std::string, std::uint64_t>> out;
    fs::recursive_directory_iterator it(dir, ec), end;
    if (ec) fail("list", dir, ec.value());
    for (; it != end; it.increment(ec)) {
      if (ec) fail("list", dir, ec.value());
      const auto leaf = it->path().filename().string();
      if (is_own(leaf)) {
        if (it->is_directory(ec)) it.disable_recursion_pending();
        continue;
      }
      if (!it->is_regular_file(ec)) continue;
      auto key = it->path().string().substr(1);
      if (key.rfind(prefix.key, 0) != 0) continue;
      out.emplace_back(std::move(key), it->file_size(ec));
    }
    std::sort(out.begin(), out.end());
    if (out.size() > limit) out.resize(limit);
    return out;
  }

  std::string create_multipart(const ObjectUrl& url, const Metadata& metadata) override {
    const auto id = random_hex(16);
    const auto dir = staging_dir(url, id);
    make_dirs(dir);
    nlohmann::json j;
    j["metadata"] = metadata;
    write_whole(dir + "/metadata", transfer::as_bytes(j.dump()));
    return id;
  }

  Part upload_part(const ObjectUrl& url, const std::string& upload_id, int number,
                   transfer::Bytes data, std::optional<store::Md5> md5) override {
    const auto dir = held_upload(url, upload_id);
    if (number < 1 || number > 10000)
      throw Error(Errc::invalid_argument, "part number " + std::to_string(number) + ": 1..10000");
    Part part{number, data.size(), store::md5_hex(md5 ? *md5 : store::md5_of(data)), ""};
    pace(data.size());
    write_whole(dir + "/" + std::to_string(number) + "." + part.etag, data);
    // A part sent again with other bytes replaces the earlier one, as in S3.
    for (const auto& p : held_parts(dir))
      if (p.number == number && p.etag != part.etag)
        transfer::remove_file(dir + "/" + std::to_string(number) + "." + p.etag);
    return part;
  }

  std::vector<Part> list_parts(const ObjectUrl& url, const std::string& upload_id) override {
    return held_parts(held_upload(url, upload_id));
  }

  void complete_multipart(const ObjectUrl& url, const std::string& upload_id,
                          const std::vector<Part>& parts) override {
    const auto dir = held_upload(url, upload_id);
    const auto metadata_file =
        files::read_small_file(dir + "/metadata", kMaxMetaBytes, "upload metadata");
    const auto j = json::parse(metadata_file.bytes, dir + "/metadata");
    Metadata metadata;
    try {
      metadata = j.at("metadata").get<Metadata>();
    } catch (const nlohmann::json::exception& e) {
      throw Error(Errc::corrupt, dir + "/metadata: " + e.what());
    }
    const auto path = object_path(url);
    write_beside(
        path,
        [&](const Fd& out) {
          for (const auto& p : parts) append_part(out, dir, p);
        },
        [&](const Fd& out, const std::string& tmp) { publish(out, tmp, path, metadata); });
    forget_upload(dir);  // the object is whole: what is left of the upload is only litter
  }

  void abort_multipart(const ObjectUrl& url, const std::string& upload_id) override {
    if (const auto ec = forget_upload(staging_dir(url, upload_id)))
      throw Error(Errc::io, "cannot remove the upload " + upload_id + ": " + ec.message());
  }

 private:
  static std::string object_path(const ObjectUrl& url) {
    if (url.is_prefix()) throw Error(Errc::invalid_argument, url.text() + " names no file");
    return path_of(url);
  }

  // The upload's directory; Error(not_found) when the upload was completed or aborted.
  // An upload is held while its metadata file is: made last by create_multipart, removed first
  // when the upload completes or is aborted, so that a kill half way through either leaves an
  // upload that is whole or gone, never one whose parts outlive what completes them.
  static std::string held_upload(const ObjectUrl& url, const std::string& upload_id) {
    const auto dir = staging_dir(url, upload_id);
    if (!fs::is_regular_file(dir + "/metadata"))
      throw Error(Errc::not_found, "the upload " + upload_id + " of " + url.text() +
                                       " is gone (completed or aborted)");
    return dir;
  }

  // The upload is gone once its metadata is (held_upload); its parts are then removed.
  static std::error_code forget_upload(const std::string& dir) {
    std::error_code ec;
    fs::remove(dir + "/metadata", ec);
    if (!ec) fs::remove_all(dir, ec);
    return ec;
  }

  static std::vector<Part> held_parts(const std::string& dir) {
    std::vector<Part> out;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec)) {
      const auto leaf = e.path().filename().string();
      const auto dot = leaf.find('.');
      if (dot == 0 || dot == std::string::npos || leaf.size() - dot - 1 != 32) continue;
      Part p;
      p.etag = leaf.substr(dot + 1);
      if (p.etag.find_first_not_of("0123456789abcdef") != std::string::npos) continue;
      try {
        p.number = static_cast<int>(text::parse_double(leaf.substr(0, dot), "part", 1, 10000));
      } catch (const Error&) {
        continue;
      }
      p.size = e.file_size(ec);
      if (!ec) out.push_back(std::move(p));
    }
    if (ec) fail("list the parts in", dir, ec.value());
    std::sort(out.begin(), out.end(),
              [](const Part& a, const Part& b) { return a.number < b.number; });
    return out;
  }

  // Appends part `p`, as held, to `out`; Error(corrupt) when the store holds no such part.
  static void append_part(const Fd& out, const std::string& dir, const Part& p) {
    const auto name = dir + "/" + std::to_string(p.number) + "." + p.etag;
    const int fd = ::open(name.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      if (errno == ENOENT)
        throw Error(Errc::corrupt, "part " + std::to_string(p.number) + " with ETag " + p.etag +
                                       " is not among the upload's parts in " + dir);
      transfer::throw_io("open", name, errno);
    }
    Fd in(fd, name);
    auto left = in.size();
    if (p.size != 0 && left != p.size)
      throw Error(Errc::corrupt, name + " holds " + std::to_string(left) + " bytes, not " +
                                     std::to_string(p.size));
    loff_t from = 0;
    while (left > 0) {
      const auto n = ::copy_file_range(in.get(), &from, out.get(), nullptr, left, 0);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) transfer::throw_io("join the parts into", out.name(), n < 0 ? errno : EIO);
      left -= static_cast<std::uint64_t>(n);
    }
  }

  static Metadata metadata_of(const std::string& path, const struct stat& st) {
    const auto file = files::read_small_file_if_present(meta_path(path), kMaxMetaBytes, "metadata");
    if (!file) return {};
    try {
      const auto j = json::parse(file->bytes, meta_path(path));
      if (json::number<std::uint64_t>(j.at("size"), meta_path(path)) !=
              static_cast<std::uint64_t>(st.st_size) ||
          json::number<std::int64_t>(j.at("mtime_ns"), meta_path(path)) != transfer::mtime_ns(st))
        return {};  // another program replaced the file: the metadata is not its
      return j.at("metadata").get<Metadata>();
    } catch (const nlohmann::json::exception&) {
      return {};
    } catch (const Error&) {
      return {};
    }
  }

  void pace(std::size_t bytes) {
    if (limiter_->limited()) limiter_->acquire(bytes);
  }

  std::shared_ptr<transfer::RateLimiter> limiter_;
};

}  // namespace

store::ObjectUrl parse_file_url(std::string_view text) {
  constexpr std::string_view kScheme = "file://";
  if (text.rfind(kScheme, 0) != 0)
    throw Error(Errc::invalid_argument, "'" + std::string(text) + "' is not a file:///PATH URL");
  auto rest = text.substr(kScheme.size());
  if (rest.rfind("localhost/", 0) == 0) rest.remove_prefix(9);
  if (rest.empty() || rest[0] != '/')
    throw Error(Errc::invalid_argument,
                "'" + std::string(text) +
                    "' names a host or a relative path: a file:// URL is an absolute path on "
                    "this machine, file:///PATH (three slashes)");
  ObjectUrl u;
  u.scheme = "file";
  u.key = std::string(rest.substr(1));
  if (u.key.size() > 4096)
    throw Error(Errc::invalid_argument, "the path of '" + std::string(text).substr(0, 80) +
                                            "...' is longer than 4096 bytes");
  return u;
}

std::unique_ptr<store::Store> open_store(const store::Options& options) {
  return std::make_unique<FileStore>(options);
}

}  // namespace nubo::file_store
