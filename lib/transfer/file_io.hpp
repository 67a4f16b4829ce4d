// Thin, error-checked POSIX file I/O: every failure is an Error(io) naming the file and the
// operation, and short reads and writes are completed or reported, never ignored.
#pragma once

#include <fcntl.h>

#include <sys/stat.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "transfer/bytes.hpp"

namespace nubo::transfer {

[[noreturn]] void throw_io(const std::string& what, const std::string& path, int err);

// An owned file descriptor, remembering its name for messages.
class Fd {
 public:
  Fd() = default;
  Fd(int fd, std::string name) : fd_(fd), name_(std::move(name)) {}
  Fd(Fd&& o) noexcept : fd_(std::exchange(o.fd_, -1)), name_(std::move(o.name_)) {}
  Fd& operator=(Fd&& o) noexcept;
  ~Fd();
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;

  int get() const { return fd_; }
  const std::string& name() const { return name_; }
  explicit operator bool() const { return fd_ >= 0; }
  void close();  // reports a failed close (NFS reports write errors there)

  // Reads up to out.size() bytes at `offset`; fewer only at end of file.
  std::size_t pread(MutableBytes out, std::uint64_t offset) const;
  // Reads exactly out.size() bytes at `offset`, or throws naming `what` (truncated).
  void pread_exact(MutableBytes out, std::uint64_t offset, std::string_view what) const;
  void pwrite_all(Bytes data, std::uint64_t offset) const;
  void write_all(Bytes data) const;
  void writev_all(Bytes a, Bytes b) const;  // a then b, in as few calls as the kernel allows
  std::uint64_t size() const;
  struct stat stat() const;
  void truncate(std::uint64_t size) const;
  void datasync() const;
  void seek(std::uint64_t offset) const;

 private:
  int fd_ = -1;
  std::string name_;
};

// A stat's modification time in nanoseconds, as archives and the protocol record it.
inline std::int64_t mtime_ns(const struct stat& st) {
  return static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
}

// pwrite of all of `data` at `offset` on a descriptor not owned here; `name` for messages.
void pwrite_all(int fd, Bytes data, std::uint64_t offset, const std::string& name);

// Where a file's data lies, for skipping the holes of sparse files: SEEK_DATA says where the
// next data starts, and one answer serves every range up to there. Ranges are asked in
// increasing order of offset; reset() for another file.
class DataMap {
 public:
  void reset() { known_ = false; }
  // Whether [offset, offset + size) of `fd` is all hole. A file system without hole support
  // answers false.
  bool hole(int fd, std::uint64_t offset, std::uint64_t size);

 private:
  std::uint64_t data_from_ = 0;
  bool known_ = false;
};

Fd open_read(const std::string& path);
// O_RDWR|O_CREAT (no truncation): the caller decides what to keep. Never through a link: the
// last component is opened with O_NOFOLLOW (a link planted where a partial file or a journal
// goes is refused, not written through), and only a regular file is taken. `dir_fd`: the folder
// `path` is relative to (a TargetDir's, opened without following links), else the current one.
Fd open_write(const std::string& path, int mode = 0644, int dir_fd = AT_FDCWD,
              const std::string& shown = {});
// The permissions a new file gets by default, as cp and tar give them: 0666 less the process's
// umask. Read from /proc/self/status rather than set and reset with umask(), which would
// change it for every thread meanwhile; 0644 where /proc does not say.
int default_file_mode();
bool exists(const std::string& path);
// fsyncs the directory holding `path`, making a rename or create in it durable.
void sync_parent_dir(const std::string& path);
void rename_file(const std::string& from, const std::string& to);
void remove_file(const std::string& path);  // missing is fine

}  // namespace nubo::transfer
