#include "cost/sources/python_literal.hpp"

#include <cctype>
#include <string>

#include "common/json.hpp"

namespace nubo::cost::sources {
namespace {

// A GpuInfo is about 150 bytes and 4 levels deep; a cell far larger or deeper is not one, and
// is refused before it costs anything.
constexpr std::size_t kMaxLength = 4 << 10;
constexpr int kMaxDepth = 16;

// Rewrites the literal as JSON text token by token; the JSON parser then checks its structure.
std::optional<std::string> to_json_text(std::string_view s) {
  std::string out;
  int depth = 0;
  for (std::size_t i = 0; i < s.size();) {
    const char c = s[i];
    if ((c == '[' || c == '{' || c == '(') && ++depth > kMaxDepth) return std::nullopt;
    if (c == ']' || c == '}' || c == ')') --depth;
    if (c == '\'' || c == '"') {
      out += '"';
      for (++i; i < s.size() && s[i] != c; ++i) {
        if (s[i] == '\\') {
          if (++i == s.size()) return std::nullopt;
          if (s[i] == '\'') {
            out += '\'';
            continue;
          }
          out += '\\';
        } else if (s[i] == '"') {
          out += '\\';
        } else if (static_cast<unsigned char>(s[i]) < 0x20) {
          return std::nullopt;
        }
        out += s[i];
      }
      if (i == s.size()) return std::nullopt;  // unterminated
      out += '"';
      ++i;
    } else if (std::isalpha(static_cast<unsigned char>(c))) {
      std::size_t j = i;
      while (j < s.size() && std::isalpha(static_cast<unsigned char>(s[j]))) ++j;
      const auto word = s.substr(i, j - i);
      if (word == "True")
        out += "true";
      else if (word == "False")
        out += "false";
      else if (word == "None")
        out += "null";
      else if (word == "null" || word == "true" || word == "false" || word == "e" || word == "E")
        out += word;  // JSON's own words, which some catalogs mix in; an exponent: 1e3
      else
        return std::nullopt;
      i = j;
    } else {
      out += c;
      ++i;
    }
  }
  return out;
}

}  // namespace

std::optional<nlohmann::json> parse_python_literal(std::string_view text) {
  if (text.size() > kMaxLength) return std::nullopt;
  auto json_text = to_json_text(text);
  if (!json_text) return std::nullopt;
  try {
    return json::parse(*json_text, "GpuInfo");
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

}  // namespace nubo::cost::sources
