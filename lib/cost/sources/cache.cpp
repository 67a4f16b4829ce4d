#include "cost/sources/cache.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>

#include "common/csv.hpp"
#include "common/json.hpp"
#include "common/small_file.hpp"
#include "nubo/error.hpp"

namespace nubo::cost::sources {
namespace {

constexpr std::uint64_t kMaxMeta = 64 << 10;

[[noreturn]] void io_error(const std::string& path, const char* what) {
  throw Error(Errc::io, path + ": " + what + ": " + std::strerror(errno));
}

void write_all(int fd, const std::string& bytes, const std::string& path) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    const auto n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) io_error(path, "cannot write");
    done += static_cast<std::size_t>(n);
  }
}

}  // namespace

std::string cache_path(const std::string& dir, const std::string& name) {
  return dir + "/" + name + ".source";
}

std::optional<CachedSource> read_cached(const std::string& dir, const std::string& name) {
  const auto path = cache_path(dir, name);
  auto file = files::read_small_file_if_present(path, csv::kMaxBytes + kMaxMeta, "catalog cache");
  if (!file) return std::nullopt;
  const auto newline = file->bytes.find('\n');
  if (newline == std::string::npos || newline > kMaxMeta)
    throw Error(Errc::invalid_argument, path + ": not a catalog cache file (no metadata line)");
  const auto meta = json::parse(std::string_view(file->bytes).substr(0, newline), path);
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
  out.meta.etag = text("etag");
  out.meta.format = text("format");
  out.meta.provider = text("provider");
  out.meta.origin = "cache";
  out.body = file->bytes.substr(newline + 1);
  return out;
}

void write_cached(const std::string& dir, const CachedSource& s) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw Error(Errc::io, dir + ": cannot create the catalog cache: " + ec.message());
  const nlohmann::json meta = {{"url", s.meta.url},
                               {"fetched", s.meta.fetched},
                               {"etag", s.meta.etag},
                               {"format", s.meta.format},
                               {"provider", s.meta.provider}};
  const auto path = cache_path(dir, s.meta.name);
  const auto tmp = path + ".tmp." + std::to_string(::getpid());
  // What an update killed before its rename left behind: never read, removed by the next.
  const auto stale = std::filesystem::path(path).filename().string() + ".tmp.";
  for (const auto& e : std::filesystem::directory_iterator(dir, ec))
    if (e.path().filename().string().starts_with(stale)) std::filesystem::remove(e.path(), ec);
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) io_error(tmp, "cannot create");
  try {
    write_all(fd, meta.dump() + "\n", tmp);
    write_all(fd, s.body, tmp);
    if (::fsync(fd) != 0) io_error(tmp, "cannot sync");
  } catch (...) {
    ::close(fd);
    ::unlink(tmp.c_str());
    throw;
  }
  ::close(fd);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    ::unlink(tmp.c_str());
    io_error(path, "cannot rename the new version into place");
  }
  // The rename itself durable: sync the folder.
  if (const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
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
  std::tm tm{};
  const char* end = ::strptime(fetched.c_str(), "%Y-%m-%dT%H:%M:%SZ", &tm);
  if (!end) {
    tm = {};
    end = ::strptime(fetched.c_str(), "%Y-%m-%d", &tm);
  }
  if (!end) return -1;
  const auto then = ::timegm(&tm);
  return std::difftime(std::time(nullptr), then) / 86400.0;
}

}  // namespace nubo::cost::sources
