// The archive reader under attack: arbitrary bytes as an archive. Opening, listing, reading every
// file through Reader and verifying must either work or throw nubo::Error; never crash, hang or
// allocate without bound. Built as a libFuzzer target by the `fuzz` preset, and replayed over a
// generated corpus as a regular test (archive_fuzz_replay.cpp).
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "nubo/error.hpp"
#include "nubo/transfer.hpp"

// The key every input is read with, so that encrypted archives (the seeds include one, packed
// with it) are opened, decrypted and checked rather than refused for want of a key. It is
// written once to an in-memory file and named by path, as a key file is.
const std::string& fuzz_key_file() {
  static const std::string path = [] {
    int fd = ::memfd_create("nubo-fuzz-key", 0);
    const std::string key(64, 'a');  // 64 hexadecimal digits
    if (fd < 0 || ::fchmod(fd, 0600) != 0 ||
        ::write(fd, key.data(), key.size()) != static_cast<ssize_t>(key.size()))
      return std::string();
    return "/proc/self/fd/" + std::to_string(fd);
  }();
  return path;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace xfer = nubo::transfer;
  // An in-memory file, reached by path like any archive.
  int fd = ::memfd_create("nubo-fuzz", MFD_CLOEXEC);
  if (fd < 0) return 0;
  for (std::size_t done = 0; done < size;) {
    auto n = ::write(fd, data + done, size - done);
    if (n <= 0) break;
    done += static_cast<std::size_t>(n);
  }
  std::string path = "/proc/self/fd/" + std::to_string(fd);
  try {
    xfer::Reader reader(path, fuzz_key_file());
    for (const auto& e : reader.entries()) {
      if (e.kind != xfer::EntryKind::file) continue;
      // Every chunk, then a range across a chunk boundary.
      for (std::uint64_t at = 0; at < e.size; at += reader.chunk_size()) {
        reader.read(e.path, at, reader.chunk_size());
      }
      reader.read(e.path, reader.chunk_size() - 1, 2);
    }
  } catch (const nubo::Error&) {
  }
  try {
    xfer::verify(path, {.threads = 1, .memory_limit = 1 << 20, .key_file = fuzz_key_file()});
  } catch (const nubo::Error&) {
  }
  ::close(fd);
  return 0;
}
