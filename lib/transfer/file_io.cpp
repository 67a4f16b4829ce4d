#include "transfer/file_io.hpp"

#include <fcntl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>

#include "nubo/error.hpp"

namespace nubo::transfer {

void throw_io(const std::string& what, const std::string& path, int err) {
  auto code = err == ENOENT ? Errc::not_found : Errc::io;
  if (err == ENOMEM) code = Errc::out_of_memory;
  throw Error(code, path + ": " + what + " failed: " + std::strerror(err));
}

Fd& Fd::operator=(Fd&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(o.fd_, -1);
    name_ = std::move(o.name_);
  }
  return *this;
}

Fd::~Fd() {
  if (fd_ >= 0) ::close(fd_);
}

void Fd::close() {
  if (fd_ < 0) return;
  int fd = std::exchange(fd_, -1);
  if (::close(fd) != 0 && errno != EINTR) throw_io("close", name_, errno);
}

std::size_t Fd::pread(MutableBytes out, std::uint64_t offset) const {
  std::size_t done = 0;
  while (done < out.size()) {
    auto n = ::pread(fd_, out.data() + done, out.size() - done, static_cast<off_t>(offset + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      throw_io("read at offset " + std::to_string(offset + done), name_, errno);
    }
    if (n == 0) break;
    done += static_cast<std::size_t>(n);
  }
  return done;
}

void Fd::pread_exact(MutableBytes out, std::uint64_t offset, std::string_view what) const {
  if (pread(out, offset) != out.size()) {
    throw Error(Errc::corrupt, name_ + ": " + std::string(what) +
                                   ": truncated (the file ends before offset " +
                                   std::to_string(offset + out.size()) + ")");
  }
}

void pwrite_all(int fd, Bytes data, std::uint64_t offset, const std::string& name) {
  std::size_t done = 0;
  while (done < data.size()) {
    auto n =
        ::pwrite(fd, data.data() + done, data.size() - done, static_cast<off_t>(offset + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      throw_io("write at offset " + std::to_string(offset + done), name, errno);
    }
    done += static_cast<std::size_t>(n);
  }
}

void Fd::pwrite_all(Bytes data, std::uint64_t offset) const {
  transfer::pwrite_all(fd_, data, offset, name_);
}

bool DataMap::hole(int fd, std::uint64_t offset, std::uint64_t size) {
  if (!known_ || offset > data_from_) {
    auto d = ::lseek(fd, static_cast<off_t>(offset), SEEK_DATA);
    // ENXIO: no data after offset (a trailing hole); any other failure: no hole support.
    if (d < 0) {
      data_from_ = errno == ENXIO ? UINT64_MAX : offset;
    } else {
      data_from_ = static_cast<std::uint64_t>(d);
    }
    known_ = true;
  }
  return data_from_ >= offset + size;
}

void Fd::write_all(Bytes data) const {
  writev_all(data, {});
}

void Fd::writev_all(Bytes a, Bytes b) const {
  iovec iov[2] = {{const_cast<std::byte*>(a.data()), a.size()},
                  {const_cast<std::byte*>(b.data()), b.size()}};
  int first = 0;
  while (first < 2) {
    if (iov[first].iov_len == 0) {
      ++first;
      continue;
    }
    auto n = ::writev(fd_, iov + first, 2 - first);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw_io("write", name_, errno);
    }
    auto left = static_cast<std::size_t>(n);
    while (first < 2 && left >= iov[first].iov_len) {
      left -= iov[first].iov_len;
      iov[first].iov_len = 0;
      ++first;
    }
    if (first < 2) {
      iov[first].iov_base = static_cast<char*>(iov[first].iov_base) + left;
      iov[first].iov_len -= left;
    }
  }
}

struct stat Fd::stat() const {
  struct stat st {};
  if (::fstat(fd_, &st) != 0) throw_io("stat", name_, errno);
  return st;
}

std::uint64_t Fd::size() const {
  return static_cast<std::uint64_t>(stat().st_size);
}

void Fd::truncate(std::uint64_t size) const {
  if (::ftruncate(fd_, static_cast<off_t>(size)) != 0) throw_io("truncate", name_, errno);
}

void Fd::datasync() const {
  if (::fdatasync(fd_) != 0) throw_io("fdatasync", name_, errno);
}

void Fd::seek(std::uint64_t offset) const {
  if (::lseek(fd_, static_cast<off_t>(offset), SEEK_SET) < 0) throw_io("seek", name_, errno);
}

Fd open_read(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw_io("open", path, errno);
  return Fd(fd, path);
}

int default_file_mode() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("Umask:", 0) != 0) continue;
    try {
      return 0666 & ~static_cast<int>(std::stoul(line.substr(6), nullptr, 8) & 0777);
    } catch (const std::exception&) {
      break;
    }
  }
  return 0644;
}

Fd open_write(const std::string& path, int mode, int dir_fd, const std::string& shown) {
  const auto& name = shown.empty() ? path : shown;
  int fd = ::openat(dir_fd, path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, mode);
  if (fd < 0 && errno == ELOOP)
    throw Error(Errc::io, name + " is a symlink: refusing to write through it");
  if (fd < 0) throw_io("open for writing", name, errno);
  Fd out(fd, name);
  if (!S_ISREG(out.stat().st_mode))
    throw Error(Errc::io, name + " is not a regular file: refusing to write to it");
  return out;
}

bool exists(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

void sync_parent_dir(const std::string& path) {
  auto slash = path.rfind('/');
  std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) throw_io("open directory", dir, errno);
  Fd d(fd, dir);
  if (::fsync(fd) != 0 && errno != EINVAL) throw_io("fsync", dir, errno);
}

void rename_file(const std::string& from, const std::string& to) {
  if (::rename(from.c_str(), to.c_str()) != 0) throw_io("rename to " + to, from, errno);
}

void remove_file(const std::string& path) {
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) throw_io("remove", path, errno);
}

}  // namespace nubo::transfer
