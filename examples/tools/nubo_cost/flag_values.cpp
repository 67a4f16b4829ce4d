#include "flag_values.hpp"

#include <algorithm>

#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "nubo/cost.hpp"

#include "nubo/error.hpp"

namespace nubo_cost {

void bad(const std::string& message) {
  throw nubo::Error(nubo::Errc::invalid_argument, message);
}

double number(const std::string& text, const std::string& flag) {
  errno = 0;
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || errno == ERANGE || !std::isfinite(v))
    bad(flag + ": expected a number, got '" + text + "'");
  if (v < 0) bad(flag + ": must not be negative, got '" + text + "'");
  return v;
}

std::vector<nubo::cost::Pricing> pricings_of(const PlanCommand& c) {
  using nubo::cost::Pricing;
  std::vector<Pricing> out;
  if (!c.pricing.empty()) {
    if (c.pricing == "all")
      return {Pricing::on_demand, Pricing::spot, Pricing::reserved_1y, Pricing::reserved_3y};
    std::size_t start = 0;
    while (true) {
      auto end = c.pricing.find(',', start);
      auto p = nubo::cost::parse_pricing(
          c.pricing.substr(start, end == std::string::npos ? std::string::npos : end - start));
      if (std::find(out.begin(), out.end(), p) == out.end()) out.push_back(p);
      if (end == std::string::npos) break;
      start = end + 1;
    }
  } else {
    out.push_back(Pricing::on_demand);
  }
  auto add = [&](Pricing p) {
    if (std::find(out.begin(), out.end(), p) == out.end()) out.push_back(p);
  };
  if (c.spot) add(Pricing::spot);
  if (c.reserved) {
    add(Pricing::reserved_1y);
    add(Pricing::reserved_3y);
  }
  return out;
}

}  // namespace nubo_cost
