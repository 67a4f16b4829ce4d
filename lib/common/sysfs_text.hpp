// Reading the kernel's small text files (sysfs, proc): what device discovery reads from the
// machine itself when no driver says it.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>

namespace nubo::detail {

// The first line of a small sysfs or proc file; empty when it cannot be read.
inline std::string first_line(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

}  // namespace nubo::detail
