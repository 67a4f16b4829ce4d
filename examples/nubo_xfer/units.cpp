#include "units.hpp"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace nubo_xfer {

std::uint64_t parse_size(const std::string& text, const std::string& option) {
  auto bad = [&] {
    return std::invalid_argument(option + " '" + text +
                                 "' is not a size: use bytes or a number with K, M, G or T "
                                 "(powers of 1024; KB, MB, GB, TB: powers of 1000), e.g. 4M");
  };
  std::size_t pos = 0;
  double value = 0;
  try {
    value = std::stod(text, &pos);
  } catch (const std::exception&) {
    throw bad();
  }
  if (!std::isfinite(value) || value < 0 || !std::isdigit(static_cast<unsigned char>(text[0]))) {
    throw bad();
  }
  std::string unit;
  for (auto c : text.substr(pos))
    unit += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  double scale = 1;
  if (unit.empty() || unit == "B") {
    scale = 1;
  } else {
    static const std::string prefixes = "KMGT";
    auto p = unit.empty() ? std::string::npos : prefixes.find(unit[0]);
    if (p == std::string::npos) throw bad();
    auto rest = unit.substr(1);
    double base = rest == "B" ? 1000 : (rest.empty() || rest == "IB") ? 1024 : 0;
    if (base == 0) throw bad();
    scale = std::pow(base, static_cast<double>(p + 1));
  }
  double bytes = value * scale;
  if (bytes >= 18446744073709551615.0) throw bad();
  return static_cast<std::uint64_t>(std::llround(bytes));
}

std::string format_bytes(double bytes) {
  static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  int u = 0;
  while (bytes >= 1024 && u < 5) {
    bytes /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.2f %s", bytes, units[u]);
  return buf;
}

std::string format_duration(double seconds) {
  if (seconds < 0 || !std::isfinite(seconds) || seconds > 99 * 3600.0) return "--:--:--";
  auto s = static_cast<long>(seconds + 0.5);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
  return buf;
}

}  // namespace nubo_xfer
