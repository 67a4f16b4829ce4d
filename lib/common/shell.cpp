#include "common/shell.hpp"

#include "common/utf8.hpp"
#include "nubo/error.hpp"

namespace nubo::shell {

std::string quote(std::string_view word, std::string_view what) {
  if (word.find('\0') != std::string_view::npos)
    throw Error(Errc::invalid_argument,
                std::string(what) + ": '" + printable(word) + "' holds a NUL byte");
  std::string out = "'";
  for (char c : word) out += c == '\'' ? std::string_view("'\\''") : std::string_view(&c, 1);
  return out + "'";
}

std::string comment(std::string_view text) {
  std::string out;
  for (const auto& line : utf8::ascii_lines(text)) out += (line.empty() ? "#" : "# ") + line + "\n";
  return out;
}

}  // namespace nubo::shell
