#include "common/small_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
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
  ~Closer() { ::close(fd); }
};

}  // namespace

std::optional<SmallFile> read_small_file_if_present(const std::string& path,
                                                    std::uint64_t max_bytes,
                                                    std::string_view what) {
  const auto named = std::string(what) + " '" + path + "'";
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) {
    if (errno == ENOENT) return std::nullopt;
    throw Error(Errc::io, named + " cannot be opened: " + std::strerror(errno));
  }
  Closer closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0)
    throw Error(Errc::io, named + " cannot be read: " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) {
    throw Error(Errc::invalid_argument,
                named + " is " + std::string(kind_of(st.st_mode)) + ", not a regular file");
  }
  const auto too_large = [&] {
    return Error(Errc::invalid_argument, named + " holds more than " +
                                             format_bytes(static_cast<double>(max_bytes), 0) +
                                             ", more than a " + std::string(what) + " may have");
  };
  if (static_cast<std::uint64_t>(st.st_size) > max_bytes) throw too_large();
  SmallFile out;
  out.mode = st.st_mode & 07777;
  // One byte more than the limit: a file that grew past it is caught, not cut short.
  out.bytes.resize(static_cast<std::size_t>(
                       std::min<std::uint64_t>(static_cast<std::uint64_t>(st.st_size), max_bytes)) +
                   1);
  std::size_t done = 0;
  for (;;) {
    if (done == out.bytes.size()) {
      if (done > max_bytes) throw too_large();
      out.bytes.resize(std::min<std::uint64_t>(max_bytes + 1, 2 * done + 4096));
    }
    const auto n = ::read(fd, out.bytes.data() + done, out.bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw Error(Errc::io, named + " cannot be read: " + std::strerror(errno));
    if (n == 0) break;
    done += static_cast<std::size_t>(n);
  }
  out.bytes.resize(done);
  return out;
}

SmallFile read_small_file(const std::string& path, std::uint64_t max_bytes, std::string_view what) {
  auto file = read_small_file_if_present(path, max_bytes, what);
  if (!file) throw Error(Errc::not_found, std::string(what) + " '" + path + "' does not exist");
  return std::move(*file);
}

}  // namespace nubo::files
