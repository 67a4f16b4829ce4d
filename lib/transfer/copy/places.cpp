#include "transfer/copy/places.hpp"

#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "common/text.hpp"
#include "nubo/error.hpp"

namespace nubo::store {

std::string resolved_path(const std::string& path) {
  std::string absolute = path.empty() ? "." : path;
  if (absolute.front() != '/') {
    char cwd[PATH_MAX];
    if (!::getcwd(cwd, sizeof cwd))
      throw Error(Errc::io, "cannot tell the current folder: " + std::string(std::strerror(errno)));
    absolute = std::string(cwd) + "/" + absolute;
  }
  // Components that do not exist yet, from the end: no link can hide in them.
  std::vector<std::string> missing;
  std::string existing = absolute;
  std::string real(1, '/');  // when nothing of the path exists
  for (;;) {
    if (char* r = ::realpath(existing.c_str(), nullptr)) {
      real.assign(r, std::strlen(r));
      std::free(r);
      break;
    }
    if (errno != ENOENT && errno != ENOTDIR)
      throw Error(Errc::io, "cannot resolve " + existing + ": " + std::strerror(errno));
    while (existing.size() > 1 && existing.back() == '/') existing.pop_back();
    const auto slash = existing.rfind('/');
    if (slash == std::string::npos || existing == "/") break;
    missing.push_back(existing.substr(slash + 1));
    existing = slash == 0 ? "/" : existing.substr(0, slash);
  }
  std::vector<std::string> parts;
  for (auto p : text::split(real, '/'))
    if (!p.empty()) parts.emplace_back(p);
  for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
    if (it->empty() || *it == ".") continue;
    if (*it == "..") {
      if (!parts.empty()) parts.pop_back();
      continue;
    }
    parts.push_back(*it);
  }
  std::string out;
  for (const auto& p : parts) out += "/" + p;
  return out.empty() ? "/" : out;
}

std::string place_key(const std::string& text, const Store* store) {
  if (!store || !is_url(text)) return "local:" + resolved_path(text) + "/";
  const auto url = parse_url(text);
  if (url.scheme == "file") return "local:" + resolved_path("/" + url.key) + "/";
  return store->service() + "|" + url.bucket + "/" + url.key;
}

void check_apart(const std::string& a_text, const std::string& a_key, const std::string& b_text,
                 const std::string& b_key) {
  if (a_key == b_key)
    throw Error(Errc::invalid_argument,
                a_text + " is its own destination (" + b_text + " is the same place)");
  if (a_key.starts_with(b_key) || b_key.starts_with(a_key))
    throw Error(Errc::invalid_argument,
                a_text + " and " + b_text + " overlap: one lies inside the other");
}

}  // namespace nubo::store
