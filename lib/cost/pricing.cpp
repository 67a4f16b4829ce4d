// Pricing beyond instance hours: reserved terms, egress tiers, rent or own, tags, the live meter.
#include <cmath>
#include <cstdio>
#include <limits>

#include "cost/model.hpp"
#include "nubo/cost.hpp"
#include "nubo/error.hpp"

namespace nubo::cost {

ReservedTerms reserved_terms(const Instance& instance, Pricing term) {
  if (term != Pricing::reserved_1y && term != Pricing::reserved_3y)
    throw Error(Errc::invalid_argument,
                "reserved_terms: the term must be reserved-1y or reserved-3y");
  ReservedTerms r;
  r.hourly = instance.price(term);
  r.derived =
      term == Pricing::reserved_1y ? instance.reserved_1y_derived : instance.reserved_3y_derived;
  // A reservation is paid for every hour of its term; on-demand only for the hours used. At
  // utilisation u the two cost the same when u x on_demand = reserved: u* = reserved / on_demand.
  r.break_even_utilisation = r.hourly / instance.on_demand;
  r.discount = 1 - r.break_even_utilisation;
  return r;
}

double egress_cost(const ProviderPrices& prices, double bytes) {
  if (!(bytes >= 0) || !std::isfinite(bytes))
    throw Error(Errc::invalid_argument, "egress: the byte count must be finite and >= 0");
  const double gb = bytes / detail::kGB;
  double cost = 0, below = 0;
  for (auto [upto, price] : prices.egress_tiers) {
    if (gb <= below) break;
    cost += (std::min(gb, upto) - below) * price;
    below = upto;
  }
  return cost;
}

double OwnResult::utilisation_for_saving(double saving) const {
  // Renting saves `saving` when u H c = (1 - s)(F + u H e): u = (1 - s) F / (H (c - (1 - s) e)).
  const double keep = 1 - saving, margin = cloud_hourly - keep * energy_per_hour;
  if (margin <= 0) return std::numeric_limits<double>::infinity();
  return keep * fixed / (hours * margin);
}

OwnResult rent_vs_own(const OwnRequest& r) {
  auto need = [](bool ok, const char* what) {
    if (!ok) throw Error(Errc::invalid_argument, std::string("rent or own: ") + what);
  };
  need(r.hardware_price > 0 && std::isfinite(r.hardware_price), "the hardware price must be > 0");
  need(r.power_kw >= 0 && std::isfinite(r.power_kw), "the power must be >= 0 kW");
  need(r.years > 0 && r.years <= 50, "the years must lie in (0, 50]");
  need(r.cloud_hourly > 0 && std::isfinite(r.cloud_hourly), "the cloud price must be > 0 $/h");
  need(r.utilisation > 0 && r.utilisation <= 1, "the utilisation must lie in (0, 1]");
  need(r.kwh_price >= 0 && r.kwh_price < 100, "the electricity price must lie in [0, 100) $/kWh");
  need(r.pue >= 1 && r.pue < 10, "the PUE must lie in [1, 10)");
  need(r.maintenance_per_year >= 0 && r.maintenance_per_year < 1,
       "the maintenance must be a fraction of the price per year in [0, 1)");
  OwnResult o;
  o.hours = r.years * 8760;
  o.fixed = r.hardware_price * (1 + r.maintenance_per_year * r.years);
  // Energy only while working: the machine's draw x the facility's overhead (PUE) x the price.
  o.energy_per_hour = r.power_kw * r.pue * r.kwh_price;
  o.cloud_hourly = r.cloud_hourly;
  const double used = r.utilisation * o.hours;
  o.own_cost = o.fixed + used * o.energy_per_hour;
  o.cloud_cost = used * r.cloud_hourly;
  o.cloud_saving = 1 - o.cloud_cost / o.own_cost;
  // Owning costs F + u H e, renting u H c: equal at u* = F / (H (c - e)).
  o.break_even_utilisation = r.cloud_hourly > o.energy_per_hour
                                 ? o.fixed / (o.hours * (r.cloud_hourly - o.energy_per_hour))
                                 : std::numeric_limits<double>::infinity();
  return o;
}

double scaling_efficiency(double t1_s, double tn_s, int n) {
  if (!(t1_s > 0 && tn_s > 0 && n >= 1))
    throw Error(Errc::invalid_argument, "scaling efficiency: times must be > 0 and n >= 1");
  return t1_s / (n * tn_s);
}

std::map<std::string, double> totals_by_tag(const std::vector<Estimate>& estimates,
                                            std::string_view key) {
  std::map<std::string, double> totals;
  for (const auto& e : estimates) {
    auto it = e.tags.find(std::string(key));
    totals[it == e.tags.end() ? "" : it->second] += e.total_cost();
  }
  return totals;
}

std::string Estimate::label() const {
  return instance + " x" + std::to_string(nodes) + " " + std::string(pricing_name(pricing));
}

CostMeter::CostMeter(double hourly, double fixed) : hourly_(hourly), fixed_(fixed) {
  if (!(hourly >= 0 && std::isfinite(hourly) && fixed >= 0 && std::isfinite(fixed)))
    throw Error(Errc::invalid_argument,
                "cost meter: the hourly price and the fixed cost must be >= 0");
}

CostMeter CostMeter::for_instance(const Catalog& catalog, std::string_view instance,
                                  Pricing pricing, int nodes) {
  if (nodes < 1) throw Error(Errc::invalid_argument, "cost meter: nodes must be >= 1");
  const auto& in = catalog.get(instance);
  double price = in.price(pricing);
  if (price < 0)
    throw Error(Errc::unavailable, "cost meter: the catalog has no " +
                                       std::string(pricing_name(pricing)) + " price for " +
                                       in.name);
  CostMeter meter(price * nodes);
  meter.price_date_ =
      pricing == Pricing::spot && !in.spot_date.empty() ? in.spot_date : in.price_date;
  meter.price_source_ = in.source;
  return meter;
}

void CostMeter::update(double elapsed_s, double progress) {
  if (!(elapsed_s >= 0 && std::isfinite(elapsed_s)))
    throw Error(Errc::invalid_argument, "cost meter: elapsed time must be >= 0");
  if (!(progress >= 0 && progress <= 1))
    throw Error(Errc::invalid_argument, "cost meter: progress must lie in [0, 1]");
  elapsed_s_ = elapsed_s;
  progress_ = progress;
}

double CostMeter::spent() const {
  return fixed_ + hourly_ * elapsed_s_ / 3600;
}

double CostMeter::projected() const {
  // At a steady rate the whole job takes elapsed / progress: the fixed part once, the hourly
  // part scaled up.
  if (progress_ <= 0) return spent();
  return fixed_ + hourly_ * (elapsed_s_ / progress_) / 3600;
}

std::string CostMeter::line() const {
  return format_money(spent()) + " spent, ~" + format_money(projected()) + " projected";
}

}  // namespace nubo::cost
