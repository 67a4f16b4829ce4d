// One source file read chunk by chunk, in order, for every sink (an archive, the wire): chunks
// wholly inside a hole of a sparse file are recognised and never read, and the file's XXH3-128
// is computed along the way while the bytes are in cache.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "transfer/file_io.hpp"
#include "transfer/hash.hpp"

namespace nubo::transfer {

class FileChunks {
 public:
  // Opens `path` for reading in order (O_NOATIME where allowed); `state` continues a hash begun
  // by an interrupted attempt (the chunks before the resume point were hashed then).
  void open(const std::string& path, const FileHasher& state = {});
  void close() { fd_ = Fd(); }
  bool is_open() const { return static_cast<bool>(fd_); }
  const Fd& fd() const { return fd_; }

  // The `size` bytes at `offset` into `out` (resized to at least `size`) and into the hash;
  // true, with nothing read, when they lie in a hole. Error(io) naming the file when it is
  // shorter than it was when walked (it changed while being read).
  bool read(std::uint64_t offset, std::uint32_t size, std::vector<std::byte>& out);

  const FileHasher& hasher() const { return hasher_; }
  Hash128 digest() const { return hasher_.digest(); }

 private:
  Fd fd_;
  DataMap data_;
  FileHasher hasher_;
};

}  // namespace nubo::transfer
