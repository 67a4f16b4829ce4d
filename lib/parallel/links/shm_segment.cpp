#include "parallel/links/shm_segment.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <utility>

#include "common/crypto.hpp"
#include "common/process_alive.hpp"
#include "common/text.hpp"
#include "nubo/error.hpp"
#include "nubo/units.hpp"

namespace nubo::parallel {
namespace {

constexpr const char* kPrefix = "nubo-";

std::string random_hex() {
  std::array<std::byte, 8> bytes;
  crypto::random_bytes(bytes);
  return text::hex(bytes.data(), bytes.size());
}

[[noreturn]] void fail(const std::string& what, int err) {
  throw Error(Errc::unavailable, what + ": " + std::strerror(err) +
                                     " (processes on one host share memory through /dev/shm; "
                                     "set NUBO_SHM_DISABLE=1 to use Gloo over loopback instead)");
}

void* map(int fd, std::size_t bytes) {
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  return p == MAP_FAILED ? nullptr : p;
}

}  // namespace

bool parse_segment_name(const std::string& name, long& pid, std::uint64_t& started) {
  if (name.rfind(kPrefix, 0) != 0) return false;
  const auto parts = text::split(std::string_view(name).substr(5), '-');
  if (parts.size() != 3) return false;
  try {
    pid = static_cast<long>(text::parse_int(parts[0], "pid", 1, INT32_MAX));
    started = static_cast<std::uint64_t>(text::parse_int(parts[1], "start", 1, INT64_MAX));
  } catch (const Error&) {
    return false;
  }
  return parts[2].size() == 16 &&
         parts[2].find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

int remove_stale_segments() {
  int removed = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/dev/shm", ec)) {
    const std::string name = e.path().filename().string();
    long pid = 0;
    std::uint64_t started = 0;
    if (!parse_segment_name(name, pid, started) || proc::alive(pid, started)) continue;
    if (::shm_unlink(("/" + name).c_str()) == 0) ++removed;
  }
  return removed;
}

ShmSegment ShmSegment::create(std::size_t bytes) {
  remove_stale_segments();
  const long pid = static_cast<long>(::getpid());
  const std::string name = kPrefix + std::to_string(pid) + "-" +
                           std::to_string(proc::start_time(pid)) + "-" + random_hex();
  const int fd = ::shm_open(("/" + name).c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
  if (fd < 0) fail("cannot create the shared-memory segment /dev/shm/" + name, errno);
  // posix_fallocate reserves the pages now: a full /dev/shm is an error here, not a SIGBUS in
  // the middle of a collective.
  const int rc = ::posix_fallocate(fd, 0, static_cast<off_t>(bytes));
  void* data = rc == 0 ? map(fd, bytes) : nullptr;
  const int err = rc != 0 ? rc : errno;
  ::close(fd);
  if (!data) {
    ::shm_unlink(("/" + name).c_str());
    fail("cannot make the " + format_bytes(static_cast<double>(bytes)) +
             " shared-memory segment /dev/shm/" + name,
         err);
  }
  return ShmSegment(name, data, bytes);
}

ShmSegment ShmSegment::open(const std::string& name, long creator_pid, std::size_t bytes) {
  long pid = 0;
  std::uint64_t started = 0;
  if (!parse_segment_name(name, pid, started) || pid != creator_pid)
    throw Error(Errc::unavailable, "the shared-memory segment '" + name.substr(0, 80) +
                                       "' is not one that process " + std::to_string(creator_pid) +
                                       " made for this job");
  const int fd = ::shm_open(("/" + name).c_str(), O_RDWR, 0);
  if (fd < 0) fail("cannot open the shared-memory segment /dev/shm/" + name, errno);
  struct stat st {};
  if (::fstat(fd, &st) != 0 || static_cast<std::size_t>(st.st_size) != bytes) {
    ::close(fd);
    throw Error(Errc::unavailable, "the shared-memory segment /dev/shm/" + name + " holds " +
                                       std::to_string(st.st_size) + " bytes, not the " +
                                       std::to_string(bytes) + " of this job's");
  }
  void* data = map(fd, bytes);
  const int err = errno;
  ::close(fd);
  if (!data) fail("cannot map the shared-memory segment /dev/shm/" + name, err);
  return ShmSegment(name, data, bytes);
}

ShmSegment::ShmSegment(ShmSegment&& o) noexcept
    : name_(std::move(o.name_)),
      data_(std::exchange(o.data_, nullptr)),
      size_(std::exchange(o.size_, 0)),
      unlinked_(std::exchange(o.unlinked_, true)) {}

ShmSegment& ShmSegment::operator=(ShmSegment&& o) noexcept {
  if (this != &o) {
    if (data_) ::munmap(data_, size_);
    name_ = std::move(o.name_);
    data_ = std::exchange(o.data_, nullptr);
    size_ = std::exchange(o.size_, 0);
    unlinked_ = std::exchange(o.unlinked_, true);
  }
  return *this;
}

ShmSegment::~ShmSegment() {
  if (data_) ::munmap(data_, size_);
}

void ShmSegment::unlink() noexcept {
  if (unlinked_ || name_.empty()) return;
  unlinked_ = true;
  ::shm_unlink(("/" + name_).c_str());
}

}  // namespace nubo::parallel
