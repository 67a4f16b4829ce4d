#include "transfer/paths.hpp"

#include "common/text.hpp"
#include "nubo/error.hpp"

namespace nubo::transfer::paths {

std::string problem(std::string_view path) {
  if (path.empty()) return "is empty";
  if (path.size() > kMaxLength) return "is longer than 4096 bytes";
  if (path.find('\0') != std::string_view::npos) return "contains a NUL byte";
  if (path.front() == '/') return "is absolute";
  for (auto part : text::split(path, '/')) {
    if (part.empty()) return "has an empty component (a doubled or trailing '/')";
    if (part == ".") return "has a '.' component";
    if (part == "..") return "has a '..' component";
  }
  return {};
}

std::string shown(std::string_view path) {
  std::string out;
  out.reserve(path.size());
  for (char c : path) {
    const auto b = static_cast<unsigned char>(c);
    if (b < 0x20 || b == 0x7f) {
      static const char* hex = "0123456789abcdef";
      out += "\\x";
      out += hex[b >> 4];
      out += hex[b & 15];
    } else if (c == '\\') {
      out += "\\\\";
    } else {
      out += c;
    }
  }
  return out;
}

void check_entry(std::string_view path) {
  auto p = problem(path);
  if (!p.empty()) {
    throw Error(Errc::corrupt, "entry '" + shown(path) + "': the path " + p + "; refused");
  }
}

void check_link(std::string_view path, std::string_view target) {
  auto refuse = [&](const std::string& why) {
    throw Error(Errc::corrupt,
                "symlink '" + shown(path) + "' -> '" + shown(target) + "': " + why + "; refused");
  };
  if (target.empty()) refuse("empty target");
  if (target.find('\0') != std::string_view::npos) refuse("the target contains a NUL byte");
  if (target.front() == '/') refuse("absolute target points outside the tree");
  // Depth below the root of the directory holding the link; the target may climb with leading
  // '..' components (through real directories: unpack never writes through a link) and then only
  // descend. A '..' after a name is refused: that name may itself be a link, and '..' from where
  // it leads is not '..' from where it seems to be, which is how chains of links escape.
  long depth = 0;
  for (auto part : text::split(parent(path), '/')) {
    if (!part.empty()) ++depth;
  }
  bool descended = false;
  for (auto part : text::split(target, '/')) {
    if (part.empty() || part == ".") continue;
    if (part == "..") {
      if (descended) refuse("the target has '..' after a name");
      if (--depth < 0) refuse("the target climbs out of the tree");
    } else {
      descended = true;
    }
  }
}

std::string join(std::string_view dir, std::string_view name) {
  if (dir.empty()) return std::string(name);
  std::string s(dir);
  s += '/';
  s += name;
  return s;
}

std::string_view parent(std::string_view path) {
  auto slash = path.rfind('/');
  return slash == std::string_view::npos ? std::string_view{} : path.substr(0, slash);
}

std::string_view leaf(std::string_view path) {
  auto slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

}  // namespace nubo::transfer::paths
