// An in-memory file (memfd) holding given bytes, reached by path like any file: what the fuzz
// targets feed the readers that take a path, without touching the disk.
#pragma once

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstddef>
#include <string>

namespace nubo_test {

struct MemFile {
  int fd = -1;
  std::string path;  // "/proc/self/fd/N"; empty when it could not be made
  MemFile(const void* data, std::size_t size) {
    fd = ::memfd_create("nubo-fuzz", MFD_CLOEXEC);
    if (fd < 0) return;
    const auto* p = static_cast<const char*>(data);
    for (std::size_t done = 0; done < size;) {
      auto n = ::write(fd, p + done, size - done);
      if (n <= 0) break;
      done += static_cast<std::size_t>(n);
    }
    ::fchmod(fd, 0600);  // as a key or token file must be
    path = "/proc/self/fd/" + std::to_string(fd);
  }
  ~MemFile() {
    if (fd >= 0) ::close(fd);
  }
  MemFile(const MemFile&) = delete;
  MemFile& operator=(const MemFile&) = delete;
};

}  // namespace nubo_test
