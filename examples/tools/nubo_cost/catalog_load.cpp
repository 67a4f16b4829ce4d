#include "catalog_load.hpp"

#include <cmath>
#include <iostream>

#include "cli.hpp"
#include "flag_values.hpp"
#include "nubo/units.hpp"

namespace nubo_cost {
namespace {

using namespace nubo::cost;

std::string days(double d) {
  return nubo_cli::count_of(static_cast<unsigned long long>(std::floor(std::max(0.0, d))), "day");
}

}  // namespace

Catalog load_catalog(const CatalogFlags& f) {
  ReservedDiscounts d;
  if (!f.reserved_discount.empty()) {
    std::string s = f.reserved_discount;
    std::size_t start = 0;
    while (start < s.size()) {
      auto end = s.find(',', start);
      auto item = s.substr(start, end == std::string::npos ? std::string::npos : end - start);
      auto eq = item.find('=');
      auto key = item.substr(0, eq);
      if (eq == std::string::npos || (key != "1y" && key != "3y"))
        bad("--reserved-discount: expected 1y=FRACTION,3y=FRACTION, got '" + item + "'");
      double v = number(item.substr(eq + 1), "--reserved-discount " + key);
      (key == "1y" ? d.one_year : d.three_year) = v;
      if (end == std::string::npos) break;
      start = end + 1;
    }
  }
  auto catalog = Catalog::current();
  catalog.set_reserved_discounts(d);
  bool first = true;
  for (const auto& path : f.catalogs) {
    catalog.load_file(path, f.replace && first);
    first = false;
  }
  // A source that gave nothing at all is a provider missing from every answer: said on every
  // command, not only in `catalog --sources`.
  for (const auto& s : catalog.source_info())
    if (s.rows == 0 && !s.skipped.empty())
      std::cerr << "warning: " << s.name << " (" << s.origin << ") gave no offers: all "
                << nubo_cli::count_of(s.skipped.size(), "record") << " refused, e.g. "
                << s.skipped.front().where << ": " << s.skipped.front().reason << "\n";
  return catalog;
}

std::string price_age_text(const Catalog& catalog, const CatalogFlags& f) {
  const double max_days = nubo::parse_duration(f.max_age, "--max-age") / 86400;
  const CatalogSource* oldest = nullptr;
  std::string newest;
  std::size_t dated = 0;
  std::string stale;
  for (const auto& s : catalog.source_info()) {
    if (s.rows == 0 || s.fetched.empty()) continue;
    ++dated;
    if (!oldest || s.fetched < oldest->fetched) oldest = &s;
    if (newest.empty() || s.fetched > newest) newest = s.fetched;
    const double age = s.age_days();
    if (age > max_days)
      stale += "warning: " + s.name + " (" + s.origin + ") is " + days(age) +
               " old, past --max-age " + f.max_age + ": `nubo-cost catalog update` refreshes it\n";
  }
  if (dated == 0) return {};
  const auto first = oldest->fetched.substr(0, 10);
  std::string out = "Prices from " + std::to_string(dated) + " sources, fetched " + first;
  if (newest.substr(0, 10) != first) out += " to " + newest.substr(0, 10);
  out += " (the oldest " + days(oldest->age_days()) +
         " ago; `nubo-cost catalog --sources` lists them)\n";
  return out + stale;
}

}  // namespace nubo_cost
