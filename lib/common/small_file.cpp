#include "common/small_file.hpp"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "nubo/error.hpp"
#include "nubo/units.hpp"

namespace nubo::files {
namespace {

std::string_view kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "something else";
}

// Closes the descriptor on every way out.
struct Closer {
  int fd;
  ~Closer() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

OpenFile::OpenFile(OpenFile&& o) noexcept
    : fd_(std::exchange(o.fd_, -1)), size_(o.size_), mode_(o.mode_), named_(std::move(o.named_)) {}

OpenFile& OpenFile::operator=(OpenFile&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(o.fd_, -1);
    size_ = o.size_;
    mode_ = o.mode_;
    named_ = std::move(o.named_);
  }
  return *this;
}

OpenFile::~OpenFile() {
  if (fd_ >= 0) ::close(fd_);
}

std::size_t OpenFile::read_at(void* out, std::size_t n, std::uint64_t offset) const {
  std::size_t done = 0;
  while (done < n) {
    const auto got =
        ::pread(fd_, static_cast<char*>(out) + done, n - done, static_cast<off_t>(offset + done));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) throw Error(Errc::io, named_ + " cannot be read: " + std::strerror(errno));
    if (got == 0) break;
    done += static_cast<std::size_t>(got);
  }
  return done;
}

std::optional<OpenFile> open_regular_file_if_present(const std::string& path,
                                                     std::string_view what) {
  auto named = std::string(what) + " '" + path + "'";
  // O_NONBLOCK: opening a FIFO never waits for a writer; what it is is then read on the
  // descriptor itself, so nothing can be swapped in between.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) {
    if (errno == ENOENT) return std::nullopt;
    throw Error(Errc::io, named + " cannot be opened: " + std::strerror(errno));
  }
  Closer closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0)
    throw Error(Errc::io, named + " cannot be read: " + std::strerror(errno));
  if (!S_ISREG(st.st_mode))
    throw Error(Errc::invalid_argument,
                named + " is " + std::string(kind_of(st.st_mode)) + ", not a regular file");
  closer.fd = -1;
  return OpenFile(fd, static_cast<std::uint64_t>(st.st_size), st.st_mode & 07777, std::move(named));
}

std::optional<SmallFile> read_small_file_if_present(const std::string& path,
                                                    std::uint64_t max_bytes,
                                                    std::string_view what) {
  auto file = open_regular_file_if_present(path, what);
  if (!file) return std::nullopt;
  const auto named = std::string(what) + " '" + path + "'";
  const auto too_large = [&] {
    return Error(Errc::invalid_argument, named + " holds more than " +
                                             format_bytes(static_cast<double>(max_bytes), 0) +
                                             ", more than a " + std::string(what) + " may have");
  };
  if (file->size() > max_bytes) throw too_large();
  SmallFile out;
  out.mode = file->mode();
  // One byte more than the limit: a file that grew past it is caught, not cut short.
  out.bytes.resize(static_cast<std::size_t>(std::min<std::uint64_t>(file->size(), max_bytes)) + 1);
  std::size_t done = 0;
  for (;;) {
    if (done == out.bytes.size()) {
      if (done > max_bytes) throw too_large();
      out.bytes.resize(std::min<std::uint64_t>(max_bytes + 1, 2 * done + 4096));
    }
    const auto n = file->read_at(out.bytes.data() + done, out.bytes.size() - done, done);
    if (n == 0) break;
    done += n;
  }
  out.bytes.resize(done);
  return out;
}

SmallFile read_small_file(const std::string& path, std::uint64_t max_bytes, std::string_view what) {
  auto file = read_small_file_if_present(path, max_bytes, what);
  if (!file) throw Error(Errc::not_found, std::string(what) + " '" + path + "' does not exist");
  return std::move(*file);
}

void write_small_file(const std::string& dir, const std::string& name, std::string_view bytes,
                      unsigned mode, std::string_view what) {
  const auto path = (dir.empty() ? std::string(".") : dir) + "/" + name;
  const auto named = std::string(what) + " '" + path + "'";
  if (name.empty() || name == "." || name == ".." || name.find('/') != std::string::npos ||
      name.find('\0') != std::string::npos)
    throw Error(Errc::invalid_argument, named + ": not a plain file name");
  const int dir_fd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd < 0)
    throw Error(Errc::io, named + ": cannot open its folder: " + std::strerror(errno));
  Closer dir_closer{dir_fd};
  // A name of its own per writer: two writers of one file never share a temporary, and a name
  // someone planted is skipped, not followed.
  std::string tmp;
  int fd = -1;
  for (int attempt = 0; fd < 0 && attempt < 16; ++attempt) {
    std::uint64_t r = 0;
    if (::getrandom(&r, sizeof r, GRND_NONBLOCK) != sizeof r) r = 0;
    char buf[288];
    std::snprintf(buf, sizeof buf, ".%.200s.%d-%d-%016llx.tmp", name.c_str(),
                  static_cast<int>(::getpid()), attempt, static_cast<unsigned long long>(r));
    tmp = buf;
    fd = ::openat(dir_fd, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0 && errno != EEXIST) break;
  }
  if (fd < 0) throw Error(Errc::io, named + ": cannot create it: " + std::strerror(errno));
  {
    Closer closer{fd};
    const auto fail = [&](const char* step) {
      const int e = errno;
      ::unlinkat(dir_fd, tmp.c_str(), 0);
      throw Error(Errc::io, named + ": cannot " + step + ": " + std::strerror(e));
    };
    for (std::size_t done = 0; done < bytes.size();) {
      const auto n = ::write(fd, bytes.data() + done, bytes.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) fail("write it");
      done += static_cast<std::size_t>(n);
    }
    if (::fchmod(fd, static_cast<mode_t>(mode & 07777)) != 0) fail("set its mode");
    if (::fsync(fd) != 0) fail("flush it");
  }
  if (::renameat(dir_fd, tmp.c_str(), dir_fd, name.c_str()) != 0) {
    const int e = errno;
    ::unlinkat(dir_fd, tmp.c_str(), 0);
    throw Error(Errc::io, named + ": cannot rename into place: " + std::strerror(e));
  }
}

}  // namespace nubo::files
