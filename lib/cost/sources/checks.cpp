#include "cost/sources/checks.hpp"

#include <algorithm>
#include <cstdio>
#include <initializer_list>
#include <unordered_map>

#include "common/csv.hpp"
#include "common/text.hpp"
#include "common/utf8.hpp"
#include "nubo/error.hpp"

namespace nubo::embedded {
std::string_view cost_price_bands_csv();  // generated from lib/cost/sources/price_bands.csv
}

namespace nubo::cost::sources {
namespace {

struct Band {
  double min = 0, max = 0;  // $ per GPU-hour
};

const std::unordered_map<std::string, Band>& bands() {
  static const auto table = [] {
    std::unordered_map<std::string, Band> t;
    const auto& gpus = nubo::detail::GpuCatalog::builtin();
    auto csv = csv::Table::parse(embedded::cost_price_bands_csv(), "embedded price_bands.csv",
                                 {"model", "min_gpu_hour", "max_gpu_hour"});
    for (const auto& row : csv.rows()) {
      const auto* m = gpus.find(row.str("model"));
      if (!m) row.fail("model: unknown GPU model '" + row.str("model") + "'");
      Band b{row.number("min_gpu_hour", 1e-4, 1e3), row.number("max_gpu_hour", 1e-4, 1e3)};
      if (b.min >= b.max) row.fail("min_gpu_hour must be below max_gpu_hour");
      t[m->model] = b;
    }
    return t;
  }();
  return table;
}

std::string dollars(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "$%.4g", v);
  return buf;
}

}  // namespace

std::string check_price(const nubo::detail::GpuModel& model, double gpus, double vcpus,
                        double price, const char* what) {
  if (!(price > 0)) return std::string(what) + " price of zero";
  auto it = bands().find(model.model);
  if (it == bands().end()) return {};
  const double per_gpu = price / gpus;
  const double host = std::max(0.0, vcpus) * kMaxVcpuHour / gpus;  // the CPUs' share, at most
  if (per_gpu < it->second.min || per_gpu > it->second.max + host)
    return std::string(what) + " price " + dollars(per_gpu) + " per GPU-hour is implausible for " +
           model.model + " (expected " + dollars(it->second.min) + " to " +
           dollars(it->second.max + host) +
           (host > 0 ? " with its " + std::to_string(static_cast<long long>(vcpus)) + " vCPUs"
                     : std::string()) +
           ")";
  return {};
}

std::string check_below_on_demand(double price, double on_demand, const char* what) {
  if (price > on_demand)
    return std::string(what) + " price " + dollars(price) + "/h is above on-demand " +
           dollars(on_demand) + "/h";
  return {};
}

std::string check_text(std::string_view value, const char* what) {
  constexpr std::size_t kMaxName = 256;
  try {
    utf8::check_plain(value, what, kMaxName);
  } catch (const Error& e) {
    return e.what();
  }
  return {};
}

namespace {

using Named = std::pair<const std::string&, const char*>;  // a value and what it is

// The first of `names` that check_text refuses, and why; "" when none.
std::string first_refused(std::initializer_list<Named> names) {
  for (const auto& [value, what] : names)
    if (auto why = check_text(value, what); !why.empty()) return why;
  return {};
}

}  // namespace

std::string check_names(const Instance& in) {
  return first_refused({{in.provider, "provider"},
                        {in.name, "instance"},
                        {in.region, "region"},
                        {in.accelerator, "accelerator"},
                        {in.interruption_band, "interruption band"}});
}

void check_rows(Imported& got) {
  const auto skip = [&](const std::string& where, const std::string& why) {
    got.skipped.push_back({where, why});
  };
  std::erase_if(got.instances, [&](const Instance& in) {
    const auto why = check_names(in);
    if (!why.empty()) skip(in.source, why);
    return !why.empty();
  });
  std::erase_if(got.reserved, [&](const ReservedPrice& r) {
    const auto why = first_refused({{r.instance, "instance"}, {r.region, "region"}});
    if (!why.empty()) skip(r.where, why);
    return !why.empty();
  });
  std::erase_if(got.bands, [&](const InterruptionBand& b) {
    const auto why =
        first_refused({{b.instance, "instance"}, {b.region, "region"}, {b.band, "band"}});
    if (!why.empty()) skip(b.where, why);
    return !why.empty();
  });
  for (auto& row : got.skipped) {
    row.where = printable(row.where);
    row.reason = printable(row.reason);
  }
}

}  // namespace nubo::cost::sources
