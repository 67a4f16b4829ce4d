// What the archive fuzz targets do with each input: every reader nubo has, over an archive at
// `path`, must either work or throw nubo::Error; never crash, hang or allocate without bound.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>

#include "mem_file.hpp"
#include "nubo/error.hpp"
#include "nubo/transfer.hpp"

namespace nubo_fuzz {

using nubo_test::MemFile;

// 64 hexadecimal 'a's: the key every input is read with, so that encrypted archives are opened,
// decrypted and checked rather than refused for want of a key.
inline constexpr char kKeyHex[] =
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";

inline const std::string& key_file() {
  static const MemFile key(kKeyHex, sizeof kKeyHex - 1);
  return key.path;
}

// Lists, reads every file through Reader (every chunk, and a range across a chunk boundary),
// verifies, and, with `unpack_to`, unpacks into that folder (emptied afterwards).
inline void read_everything(const std::string& path, const std::string& unpack_to = {}) {
  namespace xfer = nubo::transfer;
  try {
    xfer::Reader reader(path, key_file());
    for (const auto& e : reader.entries()) {
      if (e.kind != xfer::EntryKind::file) continue;
      for (std::uint64_t at = 0; at < e.size; at += reader.chunk_size())
        reader.read(e.path, at, reader.chunk_size());
      reader.read(e.path, reader.chunk_size() - 1, 2);
    }
  } catch (const nubo::Error&) {
  }
  try {
    xfer::verify(path, {.threads = 1, .memory_limit = 1 << 20, .key_file = key_file()});
  } catch (const nubo::Error&) {
  }
  if (unpack_to.empty()) return;
  try {
    xfer::unpack(path, unpack_to,
                 {.threads = 1, .memory_limit = 1 << 20, .sync = false, .key_file = key_file()});
  } catch (const nubo::Error&) {
  }
  std::error_code ec;
  std::filesystem::remove_all(unpack_to, ec);
}

}  // namespace nubo_fuzz
