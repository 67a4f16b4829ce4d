// Names of the cost enums, and the units a user types: durations, byte counts, money.
#include <cctype>
#include <cmath>
#include <cstdio>
#include <string>

#include "common/text.hpp"
#include "nubo/cost.hpp"
#include "nubo/error.hpp"
#include "nubo/schedule.hpp"

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

std::string_view optimizer_name(Optimizer o) noexcept {
  return o == Optimizer::sgd ? "sgd" : "adam";
}

Optimizer parse_optimizer(std::string_view text) {
  auto t = text::lower(text::trim(text));
  if (t == "adam" || t == "adamw") return Optimizer::adam;
  if (t == "sgd") return Optimizer::sgd;
  throw Error(Errc::invalid_argument,
              "unknown optimizer '" + std::string(text) + "': use adam (or adamw) or sgd");
}

std::string_view schedule_method_name(ScheduleMethod m) noexcept {
  switch (m) {
    case ScheduleMethod::automatic:
      return "auto";
    case ScheduleMethod::exact:
      return "exact";
    case ScheduleMethod::heuristic:
      return "heuristic";
  }
  return "auto";
}

ScheduleMethod parse_schedule_method(std::string_view text) {
  for (auto m : {ScheduleMethod::automatic, ScheduleMethod::exact, ScheduleMethod::heuristic})
    if (text == schedule_method_name(m)) return m;
  throw Error(Errc::invalid_argument,
              "method '" + printable(std::string(text)) + "': auto, exact or heuristic");
}

std::string_view placement_name(Placement p) noexcept {
  switch (p) {
    case Placement::reserved:
      return "reserved";
    case Placement::on_demand:
      return "on-demand";
    case Placement::spot:
      return "spot";
    case Placement::unplaced:
      return "unplaced";
  }
  return "unplaced";
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
      // Under the tenth decimal there is nothing to show but zero.
      if (first == std::string::npos) return "$0.00";
      small = small.substr(0, std::min(small.size(), first + 2));
    }
    return small;
  }
  // Past a quadrillion dollars the cents mean nothing, and the digits would outgrow any buffer
  // (1e61 is 62 of them): the figure in scientific notation.
  if (std::fabs(dollars) >= 1e15) {
    std::snprintf(buf, sizeof buf, "%s$%.3g", dollars < 0 ? "-" : "", std::fabs(dollars));
    return buf;
  }
  std::snprintf(buf, sizeof buf, "%.2f", std::fabs(dollars));
  std::string digits(buf);
  auto dot = digits.find('.');
  return std::string(dollars < 0 ? "-$" : "$") + text::group_digits(digits.substr(0, dot)) +
         digits.substr(dot);
}

}  // namespace nubo::cost
