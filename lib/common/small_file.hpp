// Files that nubo reads whole: configuration and credentials, tokens and keys, catalogs,
// profiles, topology files, caches. Only a regular file is read, opened without blocking (a FIFO
// would hang the caller in open), and never more than its stated limit, whatever its size says:
// it may grow while it is read, or be /dev/zero. Each problem is an Error naming the file, what
// it was for and the limit.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace nubo::files {

struct SmallFile {
  std::string bytes;
  unsigned mode = 0;  // its permission bits (07777)
};

// `what` names the file's role in messages ("AWS config file", "token file"). Throws
// Error(not_found) when it does not exist, Error(invalid_argument) when it is not a regular file
// or holds more than `max_bytes`, Error(io) when it cannot be read.
SmallFile read_small_file(const std::string& path, std::uint64_t max_bytes, std::string_view what);
// The same, with nullopt when the file does not exist.
std::optional<SmallFile> read_small_file_if_present(const std::string& path,
                                                    std::uint64_t max_bytes, std::string_view what);

}  // namespace nubo::files
