#include "common/text.hpp"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <ctime>

#include "nubo/error.hpp"

namespace nubo::text {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  for (;;) {
    auto pos = s.find(sep);
    parts.push_back(s.substr(0, pos));
    if (pos == std::string_view::npos) return parts;
    s.remove_prefix(pos + 1);
  }
}

std::vector<std::string_view> split_whitespace(std::string_view s) {
  std::vector<std::string_view> parts;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    std::size_t start = i;
    while (i < s.size() && !std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    if (i > start) parts.push_back(s.substr(start, i - start));
  }
  return parts;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool iequals(std::string_view a, std::string_view b) {
  // Byte by byte: catalogs compare names per row, and a copy each time made loading slow.
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  return true;
}

std::int64_t parse_int(std::string_view s, std::string_view what, std::int64_t min,
                       std::int64_t max) {
  auto t = trim(s);
  std::int64_t value = 0;
  auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), value);
  if (t.empty() || ec == std::errc::invalid_argument || end != t.data() + t.size()) {
    throw Error(Errc::invalid_argument,
                std::string(what) + ": expected an integer, got '" + std::string(s) + "'");
  }
  if (ec == std::errc::result_out_of_range || value < min || value > max) {
    throw Error(Errc::invalid_argument, std::string(what) + ": " + std::string(t) +
                                            " is out of range [" + std::to_string(min) + ", " +
                                            std::to_string(max) + "]");
  }
  return value;
}

double parse_double(std::string_view s, std::string_view what, double min, double max) {
  auto t = trim(s);
  double value = 0;
  auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), value);
  if (t.empty() || ec == std::errc::invalid_argument || end != t.data() + t.size() ||
      !std::isfinite(value)) {
    throw Error(Errc::invalid_argument,
                std::string(what) + ": expected a number, got '" + std::string(s) + "'");
  }
  if (ec == std::errc::result_out_of_range || value < min || value > max) {
    char range[96];
    std::snprintf(range, sizeof range, " is out of range [%g, %g]", min, max);
    throw Error(Errc::invalid_argument, std::string(what) + ": " + std::string(t) + range);
  }
  return value;
}

std::string group_digits(std::string_view digits) {
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string join(const std::vector<std::string>& items, std::string_view sep) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i) out += sep;
    out += items[i];
  }
  return out;
}

std::string hex(const void* data, std::size_t size) {
  static constexpr char kDigits[] = "0123456789abcdef";
  const auto* p = static_cast<const unsigned char*>(data);
  std::string out;
  out.reserve(2 * size);
  for (std::size_t i = 0; i < size; ++i) {
    out += kDigits[p[i] >> 4];
    out += kDigits[p[i] & 15];
  }
  return out;
}

std::size_t unhex(std::string_view s, void* out, std::size_t size) {
  const auto digit = [](char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  if (s.size() != 2 * size) return std::string_view::npos;
  auto* p = static_cast<unsigned char*>(out);
  for (std::size_t i = 0; i < size; ++i) {
    const int hi = digit(s[2 * i]), lo = digit(s[2 * i + 1]);
    if (hi < 0) return 2 * i;
    if (lo < 0) return 2 * i + 1;
    p[i] = static_cast<unsigned char>(hi * 16 + lo);
  }
  return std::string_view::npos;
}

namespace {
constexpr char kBase64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
}  // namespace

// By hand rather than OpenSSL's: the common code builds without it (capabilities left out).
std::string base64(const void* data, std::size_t size) {
  const auto* p = static_cast<const unsigned char*>(data);
  std::string out;
  out.reserve(4 * ((size + 2) / 3));
  for (std::size_t i = 0; i < size; i += 3) {
    const std::uint32_t n = (std::uint32_t{p[i]} << 16) |
                            (i + 1 < size ? std::uint32_t{p[i + 1]} << 8 : 0) |
                            (i + 2 < size ? std::uint32_t{p[i + 2]} : 0);
    out += kBase64[(n >> 18) & 63];
    out += kBase64[(n >> 12) & 63];
    out += i + 1 < size ? kBase64[(n >> 6) & 63] : '=';
    out += i + 2 < size ? kBase64[n & 63] : '=';
  }
  return out;
}

std::optional<std::vector<std::byte>> unbase64(std::string_view s) {
  if (s.size() % 4 != 0) return std::nullopt;
  const auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  std::vector<std::byte> out;
  out.reserve(s.size() / 4 * 3);
  for (std::size_t i = 0; i < s.size(); i += 4) {
    const bool last = i + 4 == s.size();
    // Padding only at the end: "xx==" or "xxx=".
    const int pad = last && s[i + 3] == '=' ? (s[i + 2] == '=' ? 2 : 1) : 0;
    std::uint32_t n = 0;
    for (int k = 0; k < 4; ++k) {
      const int v = k >= 4 - pad ? 0 : value(s[i + k]);
      if (v < 0) return std::nullopt;
      n = (n << 6) | static_cast<std::uint32_t>(v);
    }
    out.push_back(static_cast<std::byte>(n >> 16));
    if (pad < 2) out.push_back(static_cast<std::byte>((n >> 8) & 255));
    if (pad < 1) out.push_back(static_cast<std::byte>(n & 255));
  }
  return out;
}

std::optional<long long> parse_utc(std::string_view s) {
  if (s.size() > 32) return std::nullopt;
  const std::string text(s);
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, sec = 0, used = -1;
  char z = 0;
  if (std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%c%n", &y, &mo, &d, &h, &mi, &sec, &z,
                  &used) != 7) {
    sec = 0;
    used = -1;
    if (std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d%c%n", &y, &mo, &d, &h, &mi, &z, &used) != 6)
      return std::nullopt;
  }
  if (used != static_cast<int>(text.size()) || z != 'Z' || y < 1970 || y > 9999 || mo < 1 ||
      mo > 12 || d < 1 || d > 31 || h < 0 || h > 23 || mi < 0 || mi > 59 || sec < 0 || sec > 59)
    return std::nullopt;
  std::tm tm{};
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = mi;
  tm.tm_sec = sec;
  return static_cast<long long>(::timegm(&tm));
}

std::string utc_text(long long seconds) {
  const auto t = static_cast<std::time_t>(seconds);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace nubo::text
