#include "nubo/units.hpp"

#include <array>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <utility>

#include "common/text.hpp"
#include "nubo/error.hpp"

namespace nubo {
namespace {

constexpr char kSizeHelp[] =
    "use bytes or a number with K, M, G, T, P (powers of 1024, as KiB, MiB...; KB, MB, GB, TB, "
    "PB: powers of 1000), e.g. 4M";
constexpr char kCountHelp[] =
    "use a number, optionally with K, M, B (or G) or T (powers of 1000), e.g. 7B or 2e9";
constexpr char kDurationHelp[] =
    "use seconds or a number with ms, s, m, h, d or w, e.g. 90s, 10m, 1h30m";

[[noreturn]] void refuse(std::string_view what, std::string_view text, const std::string& why,
                         const char* help) {
  throw Error(Errc::invalid_argument,
              std::string(what) + ": '" + std::string(text) + "' " + why + ": " + help);
}

bool number_char(std::string_view t, std::size_t i) {
  const char c = t[i];
  if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') return true;
  // An exponent: "1e3", "2.5E-2"; 'e' is no unit's first letter.
  if ((c == 'e' || c == 'E') && i > 0 && i + 1 < t.size())
    return std::isdigit(static_cast<unsigned char>(t[i + 1])) || t[i + 1] == '+' || t[i + 1] == '-';
  return (c == '+' || c == '-') && i > 0 && (t[i - 1] == 'e' || t[i - 1] == 'E');
}

// The number at the front of `t` (finite, >= 0) and where it ends.
std::pair<double, std::size_t> leading_number(std::string_view t, std::string_view what,
                                              std::string_view whole, const char* help) {
  std::size_t i = 0;
  while (i < t.size() && number_char(t, i)) ++i;
  if (i == 0) refuse(what, whole, "does not start with a number", help);
  try {
    return {text::parse_double(t.substr(0, i), what, 0, 1e300), i};
  } catch (const Error&) {
    refuse(what, whole, "is not a number from 0 up", help);
  }
}

// The multiple of a duration unit, or 0 when `u` is none.
double duration_unit(const std::string& u) {
  static const std::array<std::pair<const char*, double>, 22> kUnits{{
      {"ms", 1e-3},        {"s", 1},
      {"sec", 1},          {"secs", 1},
      {"second", 1},       {"seconds", 1},
      {"m", 60},           {"min", 60},
      {"mins", 60},        {"minute", 60},
      {"minutes", 60},     {"h", 3600},
      {"hr", 3600},        {"hrs", 3600},
      {"hour", 3600},      {"hours", 3600},
      {"d", 86400},        {"day", 86400},
      {"days", 86400},     {"w", 7 * 86400},
      {"week", 7 * 86400}, {"weeks", 7 * 86400},
  }};
  for (const auto& [name, scale] : kUnits)
    if (u == name) return scale;
  return 0;
}

}  // namespace

std::uint64_t parse_bytes(std::string_view text, std::string_view what) {
  const auto t = text::trim(text);
  if (t.empty()) refuse(what, text, "is empty", kSizeHelp);
  const auto [value, end] = leading_number(t, what, text, kSizeHelp);
  auto unit = text::lower(text::trim(t.substr(end)));
  double scale = 1;
  if (!unit.empty() && unit != "b") {
    static constexpr std::string_view kPrefixes = "kmgtp";
    const auto p = kPrefixes.find(unit[0]);
    const auto rest = std::string_view(unit).substr(1);
    const double base = rest == "b"                                     ? 1000
                        : (rest.empty() || rest == "i" || rest == "ib") ? 1024
                                                                        : 0;
    if (p == std::string_view::npos || base == 0)
      refuse(what, text, "has an unknown unit '" + unit + "'", kSizeHelp);
    scale = std::pow(base, static_cast<double>(p + 1));
  }
  const double bytes = std::round(value * scale);
  if (!(bytes < 18446744073709551616.0))
    refuse(what, text, "is more than 2^64 - 1 bytes", kSizeHelp);
  return static_cast<std::uint64_t>(bytes);
}

double parse_count(std::string_view text, std::string_view what) {
  const auto t = text::trim(text);
  if (t.empty()) refuse(what, text, "is empty", kCountHelp);
  const auto [value, end] = leading_number(t, what, text, kCountHelp);
  const auto unit = text::lower(text::trim(t.substr(end)));
  double scale = 1;
  if (unit == "k")
    scale = 1e3;
  else if (unit == "m")
    scale = 1e6;
  else if (unit == "b" || unit == "g")
    scale = 1e9;
  else if (unit == "t")
    scale = 1e12;
  else if (!unit.empty())
    refuse(what, text, "has an unknown unit '" + unit + "'", kCountHelp);
  const double count = value * scale;
  if (!(count < 1e30)) refuse(what, text, "is too large", kCountHelp);
  return count;
}

double parse_rate(std::string_view text, std::string_view what) {
  auto t = text::trim(text);
  if (t.size() > 2 && (t.substr(t.size() - 2) == "/s" || t.substr(t.size() - 2) == "/S"))
    t = t.substr(0, t.size() - 2);
  return static_cast<double>(parse_bytes(t, what));
}

double parse_duration(std::string_view text, std::string_view what) {
  const auto t = text::trim(text);
  if (t.empty()) refuse(what, text, "is empty", kDurationHelp);
  double total = 0, previous_scale = 0;
  std::size_t at = 0;
  while (at < t.size()) {
    const auto [value, length] = leading_number(t.substr(at), what, text, kDurationHelp);
    at += length;
    while (at < t.size() && t[at] == ' ') ++at;  // "2 hours"
    std::size_t unit_end = at;
    while (unit_end < t.size() && std::isalpha(static_cast<unsigned char>(t[unit_end]))) ++unit_end;
    const auto unit = text::lower(t.substr(at, unit_end - at));
    at = unit_end;
    while (at < t.size() && t[at] == ' ') ++at;  // "1h 30m"
    if (unit.empty()) {
      if (previous_scale != 0)
        refuse(what, text, "ends with a number without its unit", kDurationHelp);
      if (at != t.size()) refuse(what, text, "is not a duration", kDurationHelp);
      total = value;  // a bare number: seconds
      break;
    }
    const double scale = duration_unit(unit);
    if (scale == 0) refuse(what, text, "has an unknown unit '" + unit + "'", kDurationHelp);
    if (previous_scale != 0 && scale >= previous_scale)
      refuse(what, text, "must give its parts largest first, each once (as 1h30m)", kDurationHelp);
    previous_scale = scale;
    total += value * scale;
  }
  if (!std::isfinite(total)) refuse(what, text, "is too long", kDurationHelp);
  return total;
}

std::string format_bytes(double bytes, int decimals) {
  static const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  int u = 0;
  while (bytes >= 1024 && u < 6) {
    bytes /= 1024;
    ++u;
  }
  char buf[48];
  if (u == 0)
    std::snprintf(buf, sizeof buf, "%.0f B", bytes);
  else
    std::snprintf(buf, sizeof buf, "%.*f %s", decimals, bytes, kUnits[u]);
  return buf;
}

std::string format_duration(double seconds) {
  char buf[48];
  if (!std::isfinite(seconds)) return "forever";
  if (seconds == 0) return "0 s";
  // Under 10 s, two significant digits, so that a short job reads as what it takes ("0.42 s",
  // "3 ms") and never as "0 s".
  auto short_one = [&](double v, const char* unit) {
    std::snprintf(buf, sizeof buf, v >= 10 ? "%.0f %s" : v >= 1 ? "%.1f %s" : "%.2g %s", v, unit);
  };
  if (seconds < 1e-3)
    short_one(seconds * 1e6, "us");
  else if (seconds < 1)
    short_one(seconds * 1e3, "ms");
  else if (seconds < 10)
    short_one(seconds, "s");
  else if (seconds < 90)
    std::snprintf(buf, sizeof buf, "%.0f s", seconds);
  else if (seconds < 90 * 60)
    std::snprintf(buf, sizeof buf, "%.0f min", seconds / 60);
  else if (seconds < 72 * 3600)
    std::snprintf(buf, sizeof buf, "%.1f h", seconds / 3600);
  else if (seconds < 86400 * 1e6)
    std::snprintf(buf, sizeof buf, "%.1f d", seconds / 86400);
  else  // a million days and more: the digits would outgrow the buffer
    std::snprintf(buf, sizeof buf, "%.3g d", seconds / 86400);
  return buf;
}

std::string format_clock(double seconds) {
  if (seconds < 0 || !std::isfinite(seconds) || seconds > 99 * 3600.0) return "--:--:--";
  const auto s = static_cast<long>(seconds + 0.5);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
  return buf;
}

}  // namespace nubo
