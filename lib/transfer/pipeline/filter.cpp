#include "transfer/pipeline/filter.hpp"

#include <fnmatch.h>

#include "nubo/error.hpp"

namespace nubo::transfer {

PathFilter::PathFilter(const std::vector<std::string>& exclude,
                       const std::vector<std::string>& include) {
  for (const auto& p : exclude) exclude_.push_back(parse(p, "--exclude"));
  for (const auto& p : include) include_.push_back(parse(p, "--include"));
}

PathFilter::Pattern PathFilter::parse(const std::string& text, const char* option) {
  auto bad = [&](const std::string& why) {
    return Error(Errc::invalid_argument, std::string(option) + " pattern '" + text + "' " + why);
  };
  if (text.empty() || text == "/") throw bad("is empty");
  if (text.find('\0') != std::string::npos) throw bad("holds a NUL byte");
  // An unclosed class would silently match a literal '['.
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\') {
      ++i;
    } else if (text[i] == '[') {
      auto close = text.find(']', i + 2);
      if (close == std::string::npos) throw bad("has a '[' without its ']'");
      i = close;
    }
  }
  Pattern p;
  p.glob = text;
  if (p.glob.size() > 1 && p.glob.back() == '/') {
    p.directories_only = true;
    p.glob.pop_back();
  }
  if (p.glob.front() == '/') {
    p.anchored = true;
    p.glob.erase(0, 1);
  }
  p.whole_path = p.anchored || p.glob.find('/') != std::string::npos;
  return p;
}

bool PathFilter::Pattern::matches(std::string_view path, bool is_directory) const {
  if (directories_only && !is_directory) return false;
  auto match = [&](std::string_view candidate) {
    return ::fnmatch(glob.c_str(), std::string(candidate).c_str(), FNM_PATHNAME) == 0;
  };
  if (!whole_path) {
    auto slash = path.rfind('/');
    return match(slash == std::string_view::npos ? path : path.substr(slash + 1));
  }
  if (match(path)) return true;
  if (anchored) return false;
  for (auto slash = path.find('/'); slash != std::string_view::npos;
       slash = path.find('/', slash + 1))
    if (match(path.substr(slash + 1))) return true;
  return false;
}

bool PathFilter::excluded(std::string_view path, bool is_directory) const {
  bool out = false;
  for (const auto& p : exclude_) out = out || p.matches(path, is_directory);
  if (!out) return false;
  for (const auto& p : include_)
    if (p.matches(path, is_directory)) return false;
  return true;
}

}  // namespace nubo::transfer
