// Files that nubo reads or writes whole: configuration and credentials, tokens and keys, catalogs,
// profiles, topology files, caches. Only a regular file is read, opened without blocking (a FIFO
// would hang the caller in open), and never more than its stated limit, whatever its size says:
// it may grow while it is read, or be /dev/zero. Each problem is an Error naming the file, what
// it was for and the limit.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace nubo::files {

struct SmallFile {
  std::string bytes;
  unsigned mode = 0;  // its permission bits (07777)
};

// A regular file open for reading in pieces (a log's tail, an optimizer state's vectors): opened
// without blocking and checked on its descriptor as read_small_file does, so that neither a FIFO
// nor a device is ever read. Closed when it goes.
class OpenFile {
 public:
  OpenFile() = default;
  OpenFile(int fd, std::uint64_t size, unsigned mode, std::string named)
      : fd_(fd), size_(size), mode_(mode), named_(std::move(named)) {}
  OpenFile(OpenFile&& o) noexcept;
  OpenFile& operator=(OpenFile&& o) noexcept;
  ~OpenFile();
  OpenFile(const OpenFile&) = delete;
  OpenFile& operator=(const OpenFile&) = delete;

  std::uint64_t size() const { return size_; }  // as it was when opened
  unsigned mode() const { return mode_; }       // its permission bits (07777)
  // Up to `n` bytes at `offset` into `out`: fewer only at its end. Error(io) naming the file.
  std::size_t read_at(void* out, std::size_t n, std::uint64_t offset) const;

 private:
  int fd_ = -1;
  std::uint64_t size_ = 0;
  unsigned mode_ = 0;
  std::string named_;
};

// `path` open, or nullopt when it does not exist; Error(invalid_argument) when it is not a
// regular file (naming what it is), Error(io) when it cannot be opened. `what` as below.
std::optional<OpenFile> open_regular_file_if_present(const std::string& path,
                                                     std::string_view what);

// `what` names the file's role in messages ("AWS config file", "token file"). Throws
// Error(not_found) when it does not exist, Error(invalid_argument) when it is not a regular file
// or holds more than `max_bytes`, Error(io) when it cannot be read.
SmallFile read_small_file(const std::string& path, std::uint64_t max_bytes, std::string_view what);
// The same, with nullopt when the file does not exist.
std::optional<SmallFile> read_small_file_if_present(const std::string& path,
                                                    std::uint64_t max_bytes, std::string_view what);

// Writes `bytes` to `dir`/`name` whole or not at all, never through a link: `dir` is opened once
// (the caller's path, which may itself be a link the user made), a fresh temporary file is
// created in it with O_CREAT | O_EXCL | O_NOFOLLOW (a name planted there, link or file, is never
// opened), given `mode`, flushed and renamed over `name` (which replaces a link there rather than
// writing where it points). `name` is one component: no '/', not "." or "..". Error(io) naming
// the file otherwise.
void write_small_file(const std::string& dir, const std::string& name, std::string_view bytes,
                      unsigned mode, std::string_view what);

}  // namespace nubo::files
