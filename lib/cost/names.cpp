// Names of the cost enums, and the units a user types: durations, byte counts, money.
#include <cctype>
#include <cmath>
#include <cstdio>
#include <string>

#include "common/text.hpp"
#include "nubo/cost.hpp"
#include "nubo/error.hpp"

namespace nubo::cost {

std::string_view pricing_name(Pricing p) noexcept {
  switch (p) {
    case Pricing::on_demand:
      return "on-demand";
    case Pricing::spot:
      return "spot";
    case Pricing::reserved_1y:
      return "reserved-1y";
    case Pricing::reserved_3y:
      return "reserved-3y";
  }
  return "?";
}

Pricing parse_pricing(std::string_view text) {
  auto t = text::lower(text::trim(text));
  if (t == "on-demand" || t == "ondemand" || t == "od") return Pricing::on_demand;
  if (t == "spot") return Pricing::spot;
  if (t == "reserved-1y" || t == "1y") return Pricing::reserved_1y;
  if (t == "reserved-3y" || t == "3y") return Pricing::reserved_3y;
  throw Error(Errc::invalid_argument, "unknown pricing '" + std::string(text) +
                                          "': use on-demand, spot, reserved-1y or reserved-3y");
}

std::string_view interconnect_name(Interconnect i) noexcept {
  switch (i) {
    case Interconnect::none:
      return "none";
    case Interconnect::pcie:
      return "pcie";
    case Interconnect::nvlink:
      return "nvlink";
    case Interconnect::nvswitch:
      return "nvswitch";
  }
  return "?";
}

std::string_view dtype_name(Dtype d) noexcept {
  switch (d) {
    case Dtype::fp32:
      return "fp32";
    case Dtype::tf32:
      return "tf32";
    case Dtype::fp16:
      return "fp16";
    case Dtype::bf16:
      return "bf16";
  }
  return "?";
}

Dtype parse_dtype(std::string_view text) {
  auto t = text::lower(text::trim(text));
  if (t == "fp32" || t == "float32") return Dtype::fp32;
  if (t == "tf32") return Dtype::tf32;
  if (t == "fp16" || t == "float16" || t == "half") return Dtype::fp16;
  if (t == "bf16" || t == "bfloat16") return Dtype::bf16;
  throw Error(Errc::invalid_argument,
              "unknown dtype '" + std::string(text) + "': use fp32, tf32, fp16 or bf16");
}

namespace {

// Splits "12.5h" into 12.5 and "h"; the number must be finite and >= 0.
std::pair<double, std::string> number_and_unit(std::string_view text, std::string_view what) {
  auto t = text::trim(text);
  std::size_t i = 0;
  while (i < t.size() &&
         (std::isdigit(static_cast<unsigned char>(t[i])) || t[i] == '.' || t[i] == 'e' ||
          t[i] == 'E' ||
          ((t[i] == '+' || t[i] == '-') && i > 0 && (t[i - 1] == 'e' || t[i - 1] == 'E'))))
    ++i;
  // "1e3" is a number, but a trailing 'e' without digits is not: let parse_double judge.
  if (i == 0)
    throw Error(Errc::invalid_argument,
                std::string(what) + ": expected a number, got '" + std::string(text) + "'");
  double v = text::parse_double(t.substr(0, i), what, 0, 1e30);
  return {v, text::lower(text::trim(t.substr(i)))};
}

}  // namespace

double parse_duration(std::string_view text, std::string_view what) {
  auto [v, unit] = number_and_unit(text, what);
  double scale = 0;
  if (unit.empty() || unit == "s" || unit == "sec")
    scale = 1;
  else if (unit == "m" || unit == "min")
    scale = 60;
  else if (unit == "h" || unit == "hr" || unit == "hours")
    scale = 3600;
  else if (unit == "d" || unit == "days")
    scale = 86400;
  else if (unit == "w" || unit == "weeks")
    scale = 7 * 86400;
  else
    throw Error(Errc::invalid_argument, std::string(what) + ": unknown unit '" + unit + "' in '" +
                                            std::string(text) + "': use s, m, h, d or w");
  return v * scale;
}

double parse_bytes(std::string_view text, std::string_view what) {
  auto [v, unit] = number_and_unit(text, what);
  if (!unit.empty() && unit.back() == 'b' && unit != "b") unit.pop_back();  // "GB" -> "g"
  static const char* kDecimal = "kmgtp";
  double scale = 0;
  if (unit.empty() || unit == "b") {
    scale = 1;
  } else if (unit.size() == 1 && std::string_view(kDecimal).find(unit[0]) != std::string::npos) {
    scale = std::pow(1000.0, 1 + static_cast<double>(std::string_view(kDecimal).find(unit[0])));
  } else if (unit.size() == 2 && unit[1] == 'i' &&
             std::string_view(kDecimal).find(unit[0]) != std::string::npos) {
    scale = std::pow(1024.0, 1 + static_cast<double>(std::string_view(kDecimal).find(unit[0])));
  } else {
    throw Error(Errc::invalid_argument, std::string(what) + ": unknown unit '" + unit + "' in '" +
                                            std::string(text) +
                                            "': use K, M, G, T, P (10^3 steps) or Ki, Mi, Gi, Ti");
  }
  return v * scale;
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
  else
    std::snprintf(buf, sizeof buf, "%.1f d", seconds / 86400);
  return buf;
}

std::string format_money(double dollars) {
  if (!std::isfinite(dollars)) return "$inf";
  char buf[64];
  // Under a cent, two significant digits ("$0.0031"), so that a small job never costs "$0.00".
  if (dollars != 0 && std::fabs(dollars) < 0.01) {
    std::snprintf(buf, sizeof buf, "%s$%.2g", dollars < 0 ? "-" : "", std::fabs(dollars));
    std::string small(buf);
    // %g may choose an exponent for tiny amounts; spell them out.
    if (small.find('e') != std::string::npos) {
      std::snprintf(buf, sizeof buf, "%s$%.10f", dollars < 0 ? "-" : "", std::fabs(dollars));
      small = buf;
      const auto first = small.find_first_not_of("-$0.");
      small = small.substr(0, std::min(small.size(), first + 2));
    }
    return small;
  }
  std::snprintf(buf, sizeof buf, "%.2f", std::fabs(dollars));
  std::string digits(buf);
  auto dot = digits.find('.');
  std::string whole = digits.substr(0, dot), grouped;
  for (std::size_t i = 0; i < whole.size(); ++i) {
    if (i && (whole.size() - i) % 3 == 0) grouped += ',';
    grouped += whole[i];
  }
  return std::string(dollars < 0 ? "-$" : "$") + grouped + digits.substr(dot);
}

}  // namespace nubo::cost
