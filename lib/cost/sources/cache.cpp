#include "cost/sources/cache.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>

#include "common/csv.hpp"
#include "common/http.hpp"
#include "common/json.hpp"
#include "common/small_file.hpp"
#include "common/text.hpp"
#include "common/utf8.hpp"
#include "nubo/error.hpp"

namespace nubo::cost::sources {
namespace {

constexpr std::uint64_t kMaxMeta = 64 << 10;
constexpr std::size_t kMaxEtag = 1 << 10, kMaxUrl = 8 << 10;

[[noreturn]] void io_error(const std::string& path, const char* what) {
  throw Error(Errc::io, path + ": " + what + ": " + std::strerror(errno));
}

}  // namespace

std::string cache_path(const std::string& dir, const std::string& name) {
  return dir + "/" + name + ".source";
}

namespace {

// A cache file's bytes, as read_cached reads them: the reader and the writer's read-back are one.
CachedSource parse_cached(const std::string& bytes, const std::string& path,
                          const std::string& name) {
  const auto newline = bytes.find('\n');
  if (newline == std::string::npos || newline > kMaxMeta)
    throw Error(Errc::invalid_argument, path + ": not a catalog cache file (no metadata line)");
  const auto meta = json::parse(std::string_view(bytes).substr(0, newline), path);
  CachedSource out;
  auto text = [&](const char* key) {
    auto it = meta.find(key);
    if (it == meta.end() || !it->is_string())
      throw Error(Errc::invalid_argument, path + ": metadata lacks \"" + std::string(key) + "\"");
    return it->get<std::string>();
  };
  if (!meta.is_object()) throw Error(Errc::invalid_argument, path + ": metadata is not an object");
  out.meta.name = name;
  out.meta.url = text("url");
  out.meta.fetched = text("fetched");
  // A hand-edited ETag never reaches an If-None-Match header.
  out.meta.etag = usable_etag(text("etag"));
  out.meta.format = text("format");
  out.meta.provider = text("provider");
  out.meta.origin = "cache";
  out.body = bytes.substr(newline + 1);
  return out;
}

// The cache folder locked for one writer while it lives (flock: threads of one process too).
class FolderLock {
 public:
  explicit FolderLock(const std::string& dir)
      : fd_(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)) {
    if (fd_ < 0) io_error(dir, "cannot open the catalog cache");
    while (::flock(fd_, LOCK_EX) != 0) {
      if (errno == EINTR) continue;
      locked_ = false;  // a file system without locks: no sweep of others' files then
      break;
    }
  }
  ~FolderLock() { ::close(fd_); }
  FolderLock(const FolderLock&) = delete;
  FolderLock& operator=(const FolderLock&) = delete;
  int fd() const { return fd_; }
  bool locked() const { return locked_; }

 private:
  int fd_;
  bool locked_ = true;
};

}  // namespace

std::optional<CachedSource> read_cached(const std::string& dir, const std::string& name) {
  const auto path = cache_path(dir, name);
  auto file = files::read_small_file_if_present(path, csv::kMaxBytes + kMaxMeta, "catalog cache");
  if (!file) return std::nullopt;
  return parse_cached(file->bytes, path, name);
}

std::string usable_etag(std::string_view etag) {
  if (etag.size() > kMaxEtag) return {};
  for (char c : etag)
    if (c < 0x21 || c > 0x7e) return {};
  return std::string(etag);
}

void check_source_url(const std::string& source, std::string_view url) {
  // Messages name the URL without the credentials a mirror's may carry.
  const auto shown = http::without_credentials(url);
  for (const unsigned char c : url)
    if (c < 0x20 || c == 0x7f)
      throw Error(Errc::invalid_argument, "catalog source " + source + ": the URL " +
                                              printable(shown) + " holds a control character");
  utf8::check_plain(shown, "catalog source " + source + ": URL", kMaxUrl);
  if (!url.starts_with("https://") && !url.starts_with("http://"))
    throw Error(Errc::invalid_argument,
                "catalog source " + source + ": '" + printable(shown) + "' is not an http(s) URL");
}

void write_cached(const std::string& dir, const CachedSource& s) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw Error(Errc::io, dir + ": cannot create the catalog cache: " + ec.message());
  const auto path = cache_path(dir, s.meta.name);
  check_source_url(s.meta.name, s.meta.url);
  const nlohmann::json meta = {{"url", s.meta.url},
                               {"fetched", s.meta.fetched},
                               {"etag", usable_etag(s.meta.etag)},
                               {"format", s.meta.format},
                               {"provider", s.meta.provider}};
  const auto line = meta.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (line.size() > kMaxMeta)
    throw Error(Errc::invalid_argument, path + ": the metadata would be " +
                                            std::to_string(line.size()) + " bytes; not written");
  const FolderLock lock(dir);
  // What an update killed before its rename left behind: never read, removed by the next. Under
  // the lock no other writer's temporary file is live.
  const auto stale = "." + std::filesystem::path(path).filename().string() + ".";
  if (lock.locked())
    for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
      const auto file = e.path().filename().string();
      if (file.starts_with(stale) && file.ends_with(".tmp")) std::filesystem::remove(e.path(), ec);
    }
  // Read as a plan will read it before it replaces the last good version, then written whole:
  // the old version stays until the new one is in place.
  const auto contents = line + "\n" + s.body;
  const auto parsed = parse_cached(contents, path, s.meta.name);
  if (parsed.body.size() != s.body.size() || parsed.meta.url != s.meta.url)
    throw Error(Errc::io, path + ": the new version does not read back as written; not written");
  files::write_small_file(dir, std::filesystem::path(path).filename().string(), contents, 0644,
                          "catalog cache");
  ::fsync(lock.fd());  // the rename itself durable
}

std::string utc_now() {
  return utc_time(std::time(nullptr));
}

std::string utc_time(std::time_t t) {
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

double age_days(const std::string& fetched) {
  // A time, or a bare date ("2026-11") read as its midnight.
  auto then = text::parse_utc(fetched);
  if (!then && fetched.size() == 10) then = text::parse_utc(fetched + "T00:00Z");
  if (!then) return -1;
  return std::difftime(std::time(nullptr), static_cast<std::time_t>(*then)) / 86400.0;
}

}  // namespace nubo::cost::sources
