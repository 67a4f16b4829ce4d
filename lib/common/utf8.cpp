#include "common/utf8.hpp"

#include <cstdio>
#include <string>

#include "nubo/error.hpp"

namespace nubo::utf8 {

std::size_t sequence(std::string_view s, char32_t& cp) {
  if (s.empty()) return 0;
  const auto b = [&](std::size_t i) { return static_cast<unsigned char>(s[i]); };
  const unsigned char lead = b(0);
  if (lead < 0x80) {
    cp = lead;
    return 1;
  }
  std::size_t n = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 0;
  if (n == 0 || lead > 0xf4 || n > s.size()) return 0;
  cp = lead & (0x7f >> n);
  for (std::size_t i = 1; i < n; ++i) {
    if ((b(i) & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (b(i) & 0x3f);
  }
  static constexpr char32_t kSmallest[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kSmallest[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
  return n;
}

bool reorders_text(char32_t cp) {
  return (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069) || cp == 0x200e ||
         cp == 0x200f || cp == 0x061c;
}

bool breaks_line(char32_t cp) {
  return cp == '\n' || cp == '\r' || cp == 0x85 || cp == 0x2028 || cp == 0x2029;
}

bool is_control(char32_t cp) {
  return cp < 0x20 || (cp >= 0x7f && cp < 0xa0);
}

void check_plain(std::string_view s, std::string_view what, std::size_t max_bytes, Allow allow) {
  const auto refuse = [&](const std::string& why) {
    throw Error(Errc::invalid_argument, std::string(what) + ": '" + printable(s.substr(0, 120)) +
                                            (s.size() > 120 ? "...'" : "'") + " " + why);
  };
  if (s.size() > max_bytes)
    refuse("is " + std::to_string(s.size()) + " bytes long; at most " + std::to_string(max_bytes));
  for (std::size_t at = 0; at < s.size();) {
    char32_t cp = 0;
    const auto n = sequence(s.substr(at), cp);
    const auto place = " at byte " + std::to_string(at);
    if (n == 0) refuse("is not UTF-8" + place);
    const bool allowed_break = allow == Allow::lines && (cp == '\n' || cp == '\t');
    char code[16];
    std::snprintf(code, sizeof code, "U+%04X", static_cast<unsigned>(cp));
    if (!allowed_break && (is_control(cp) || breaks_line(cp)))
      refuse("holds a control character or line break (" + std::string(code) + ")" + place);
    if (reorders_text(cp))
      refuse("holds a character that reorders text (" + std::string(code) + ")" + place);
    at += n;
  }
}

std::vector<std::string> ascii_lines(std::string_view text) {
  std::vector<std::string> lines(1);
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '\n') {
      lines.emplace_back();
    } else if (u >= 0x20 && u < 0x7f) {
      lines.back() += c;
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", u);
      lines.back() += buf;
    }
  }
  return lines;
}

}  // namespace nubo::utf8
