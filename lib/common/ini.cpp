#include "common/ini.hpp"

#include <cstdlib>
#include <sstream>

#include "common/small_file.hpp"
#include "nubo/error.hpp"

namespace nubo::ini {
namespace {

// Profile files are small; a larger one is not a profile file.
constexpr std::size_t kMaxFileBytes = 1 << 20;

std::string trim(const std::string& s) {
  const auto a = s.find_first_not_of(" \t\r");
  if (a == std::string::npos) return "";
  const auto b = s.find_last_not_of(" \t\r");
  return s.substr(a, b - a + 1);
}

}  // namespace

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

Sections read_file(const std::string& path, std::string_view what) {
  Sections out;
  const auto file = files::read_small_file_if_present(path, kMaxFileBytes, what);
  if (!file) return out;
  std::istringstream lines(file->bytes);
  std::string line, section, block;
  int number = 0;
  while (std::getline(lines, line)) {
    ++number;
    const bool indented = !line.empty() && (line[0] == ' ' || line[0] == '\t');
    const auto t = trim(line);
    if (t.empty() || t[0] == '#' || t[0] == ';') continue;
    if (t.front() == '[') {
      if (t.back() != ']')
        throw Error(Errc::invalid_argument,
                    path + ":" + std::to_string(number) + ": a section header without its ']'");
      section = trim(t.substr(1, t.size() - 2));
      block.clear();
      out[section];
      continue;
    }
    const auto eq = t.find('=');
    if (eq == std::string::npos || section.empty())
      throw Error(Errc::invalid_argument, path + ":" + std::to_string(number) +
                                              ": expected 'key = value' inside a [section]");
    const auto key = trim(t.substr(0, eq));
    const auto value = trim(t.substr(eq + 1));
    if (indented && !block.empty()) {
      out[section][block + "." + key] = value;
    } else {
      block = value.empty() ? key : "";
      out[section][key] = value;
    }
  }
  return out;
}

}  // namespace nubo::ini
