#include "nubo/error.hpp"

#include <cstdio>

namespace nubo {

namespace {

// The length of the UTF-8 sequence at the start of `s` and its code point, or 0 when it is not
// one (a stray byte, an overlong or surrogate form, a code point past U+10FFFF, or truncated).
std::size_t utf8_sequence(std::string_view s, char32_t& cp) {
  const auto b = [&](std::size_t i) { return static_cast<unsigned char>(s[i]); };
  const unsigned char lead = b(0);
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

}  // namespace

std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  char buf[12];
  while (!text.empty()) {
    const auto c = static_cast<unsigned char>(text.front());
    std::size_t n = 1;
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else if (c == '\n' || c == '\t' || c == '\r') {
      out += c == '\n' ? "\\n" : c == '\t' ? "\\t" : "\\r";
    } else if (char32_t cp = 0; c >= 0x80 && (n = utf8_sequence(text, cp)) > 0) {
      if (cp < 0xa0) {  // C1 controls: 8-bit CSI and friends
        for (std::size_t i = 0; i < n; ++i) {
          std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned char>(text[i]));
          out += buf;
        }
      } else if (reorders_text(cp)) {
        std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(cp));
        out += buf;
      } else {
        out.append(text.substr(0, n));
      }
    } else {
      n = 1;
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    }
    text.remove_prefix(n);
  }
  return out;
}

std::string_view errc_name(Errc code) noexcept {
  switch (code) {
    case Errc::ok:
      return "ok";
    case Errc::invalid_argument:
      return "invalid argument";
    case Errc::not_found:
      return "not found";
    case Errc::unavailable:
      return "unavailable";
    case Errc::io:
      return "I/O error";
    case Errc::corrupt:
      return "corrupt data";
    case Errc::timeout:
      return "timed out";
    case Errc::cancelled:
      return "cancelled";
    case Errc::unsupported:
      return "unsupported";
    case Errc::out_of_memory:
      return "out of memory";
    case Errc::internal:
      return "internal error";
  }
  return "unknown error";
}

}  // namespace nubo
