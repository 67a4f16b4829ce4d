// The archive's checksums: XXH3-64 of each chunk's raw bytes, XXH3-128 of each file's content.
// The streaming file hash can be saved and restored so that an interrupted pack or unpack
// resumes mid-file without re-reading what it had already hashed (see journal.hpp).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "transfer/bytes.hpp"

namespace nubo::transfer {

std::uint64_t hash64(Bytes data);
// XXH3-64 fed in pieces: what hash64 gives of the same bytes at once.
class Hasher64 {
 public:
  Hasher64();
  ~Hasher64();
  Hasher64(const Hasher64&) = delete;
  Hasher64& operator=(const Hasher64&) = delete;
  void update(Bytes data);
  std::uint64_t digest() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};
// A 64-bit hash as 16 lowercase hex digits: the names of journals and long temporary files.
std::string hex64(std::uint64_t v);

// XXH3-128 in its canonical (big-endian) byte order, as stored in the archive.
struct Hash128 {
  std::array<std::byte, 16> bytes{};
  std::string hex() const;
  bool operator==(const Hash128&) const = default;
};

// XXH3-128 of a whole content at once: what a FileHasher fed the same bytes gives, without its
// state (small files are hashed by the thousand).
Hash128 hash128(Bytes data);

class FileHasher;
// XXH3-128 of the first `size` bytes of the file open as `fd` (`name` for messages), reading
// only its data: holes count as zeros without being read. What a file on disk holds is
// checked this way before it is renamed into place.
Hash128 hash_on_disk(int fd, std::uint64_t size, const std::string& name);

// Streaming XXH3-128 of one file's content, fed in order.
class FileHasher {
 public:
  FileHasher();
  ~FileHasher();
  // Copies, never moves: a hasher always has a state (a moved-from one would not), and the
  // state is a few hundred bytes.
  FileHasher(const FileHasher& other);
  FileHasher& operator=(const FileHasher& other);

  void reset();
  void update(Bytes data);
  void update_zeros(std::uint64_t count);  // `count` zero bytes: holes of sparse files
  Hash128 digest() const;
  std::uint64_t length() const;  // bytes hashed so far

  // An opaque snapshot of the state, tagged with the xxHash version and layout that made it.
  std::vector<std::byte> save() const;
  // Restores a snapshot; false (state unchanged) when it was made by another xxHash build or is
  // malformed, in which case the caller redoes the file from its start.
  bool restore(Bytes snapshot);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace nubo::transfer
