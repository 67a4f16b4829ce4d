#include "nubo/error.hpp"

#include <cstdio>

#include "common/utf8.hpp"

namespace nubo {

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
    } else if (char32_t cp = 0; c >= 0x80 && (n = utf8::sequence(text, cp)) > 0) {
      if (cp < 0xa0) {  // C1 controls: 8-bit CSI and friends
        for (std::size_t i = 0; i < n; ++i) {
          std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned char>(text[i]));
          out += buf;
        }
      } else if (utf8::reorders_text(cp) || utf8::breaks_line(cp)) {
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
