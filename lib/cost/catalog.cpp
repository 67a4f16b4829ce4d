// The instance and provider catalogs: the embedded CSVs, and users' CSV or JSON files that add or
// replace rows. Every row is validated here, whatever its format; errors name file, line, reason.
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <limits>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "common/csv.hpp"
#include "common/json.hpp"
#include "common/small_file.hpp"
#include "common/text.hpp"
#include "cost/fields.hpp"
#include "cost/model.hpp"
#include "cost/planner_index.hpp"
#include "cost/sources/checks.hpp"
#include "device/backend/gpu_catalog.hpp"
#include "nubo/cost.hpp"
#include "nubo/error.hpp"

namespace nubo::embedded {
std::string_view cost_providers_csv();  // generated from lib/cost/providers.csv
}  // namespace nubo::embedded

namespace nubo::cost {
namespace {

constexpr double kMaxPrice = 1e5;  // $/h; nothing rents for more, so more is a typo
const std::vector<std::string> kInstanceColumns = {"provider",  "instance", "region",
                                                   "gpu_model", "gpus",     "on_demand"};
const std::vector<std::string> kProviderColumns = {"provider", "object_storage_gb_month",
                                                   "block_storage_gb_month", "egress_tiers"};

bool is_date(const std::string& s) {
  // YYYY-MM or YYYY-MM-DD, a real month and a day that month has.
  if (s.size() != 7 && s.size() != 10) return false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    bool dash = i == 4 || i == 7;
    if (dash != (s[i] == '-')) return false;
    if (!dash && !std::isdigit(static_cast<unsigned char>(s[i]))) return false;
  }
  const int year = std::stoi(s.substr(0, 4)), month = std::stoi(s.substr(5, 2));
  if (month < 1 || month > 12) return false;
  if (s.size() == 7) return true;
  const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const int day = std::stoi(s.substr(8, 2));
  return day >= 1 && day <= kDays[month - 1] + (month == 2 && leap ? 1 : 0);
}

std::string date_field(const detail::Fields& f, std::string_view name) {
  auto s = std::string(text::trim(f.str(name)));
  if (!s.empty() && !is_date(s))
    f.fail(std::string(name) + ": expected a date YYYY-MM or YYYY-MM-DD, got '" + s + "'");
  return s;
}

Interconnect parse_interconnect(const detail::Fields& f, int gpus) {
  auto s = text::lower(text::trim(f.str("interconnect")));
  if (s.empty()) return gpus == 1 ? Interconnect::none : Interconnect::pcie;
  if (s == "none") {
    if (gpus > 1)
      f.fail("interconnect: 'none' with " + std::to_string(gpus) +
             " GPUs; use pcie, nvlink or nvswitch");
    return Interconnect::none;
  }
  if (s == "pcie") return Interconnect::pcie;
  if (s == "nvlink") return Interconnect::nvlink;
  if (s != "nvswitch")
    f.fail("interconnect: expected none, pcie, nvlink or nvswitch, got '" + s + "'");
  return Interconnect::nvswitch;
}

Instance parse_instance(const detail::Fields& f) {
  Instance in;
  in.provider = text::lower(f.required_str("provider"));
  in.name = f.required_str("instance");
  in.region = f.required_str("region");
  const auto& gpus_table = detail::GpuCatalog::builtin();
  auto model = f.required_str("gpu_model");
  const auto* gpu = gpus_table.find(model);
  if (!gpu)
    f.fail("gpu_model: unknown GPU model '" + model + "'; known: " + gpus_table.known_models());
  in.gpu_model = gpu->model;
  // Parsed as a number first so "0" says "zero GPUs" and "1.5" says "whole number".
  double gpus = f.number("gpus", -1e9, 1e9, std::nan(""));
  if (std::isnan(gpus)) f.fail("gpus: missing value");
  if (gpus <= 0) f.fail("gpus: an instance needs at least one GPU, got " + f.number_text("gpus"));
  if (gpus != std::floor(gpus) || gpus > 64)
    f.fail("gpus: expected a whole number from 1 to 64, got " + f.number_text("gpus"));
  in.gpus = static_cast<int>(gpus);
  in.interconnect = parse_interconnect(f, in.gpus);
  if ((in.interconnect == Interconnect::nvlink || in.interconnect == Interconnect::nvswitch) &&
      gpu->nvlink_links == 0)
    f.fail("interconnect: " + std::string(interconnect_name(in.interconnect)) + " but " +
           gpu->model + " has no NVLink");
  in.vcpus = static_cast<int>(f.number("vcpus", 0, 1e5, 0));
  in.memory_gib = f.number("memory_gib", 0, 1e6, 0);
  in.network_gbps = f.number("network_gbps", 0, 1e5, 0);

  auto price = [&](std::string_view name, double fallback) {
    auto s = std::string(text::trim(f.number_text(name)));
    if (!s.empty() && s[0] == '-')
      f.fail(std::string(name) + ": a price cannot be negative, got " + s);
    return f.number(name, 0, kMaxPrice, fallback);
  };
  if (text::trim(f.number_text("on_demand")).empty()) f.fail("on_demand: missing value");
  in.on_demand = price("on_demand", 0);
  if (in.on_demand <= 0)
    f.fail("on_demand: the price must be positive, got " + f.number_text("on_demand"));
  in.spot = price("spot", -1);
  if (in.spot > in.on_demand)
    f.fail("spot: " + f.number_text("spot") + " $/h is above the on-demand price " +
           f.number_text("on_demand") + " $/h; spot is never dearer");
  in.reserved_1y = price("reserved_1y", -1);
  in.reserved_3y = price("reserved_3y", -1);
  for (auto [name, v] : {std::pair{"reserved_1y", in.reserved_1y}, {"reserved_3y", in.reserved_3y}})
    if (v > in.on_demand)
      f.fail(std::string(name) + ": " + f.number_text(name) + " $/h is above the on-demand price " +
             f.number_text("on_demand") + " $/h");
  in.gpu_link_gbs = f.number("gpu_link_gbs", 0, 1e5, 0);
  in.price_date = date_field(f, "price_date");
  in.spot_date = date_field(f, "spot_date");
  in.source = std::string(text::trim(f.str("source")));
  in.source += (in.source.empty() ? "" : "; ") + std::string("row ") + f.where();
  return in;
}

std::vector<std::pair<double, double>> parse_tiers(const detail::Fields& f) {
  std::vector<std::pair<double, double>> tiers;
  auto s = f.required_str("egress_tiers");
  double last = 0;
  for (auto part : text::split(s, ';')) {
    auto kv = text::split(text::trim(part), ':');
    if (kv.size() != 2)
      f.fail("egress_tiers: expected UPTO_GB:PRICE;...;inf:PRICE, got '" + std::string(part) + "'");
    double upto = std::numeric_limits<double>::infinity();
    if (text::lower(text::trim(kv[0])) != "inf") {
      try {
        upto = text::parse_double(text::trim(kv[0]), "egress_tiers bound", 0, 1e12);
      } catch (const Error& e) {
        f.fail(e.what());
      }
    }
    double priceval = 0;
    try {
      priceval = text::parse_double(text::trim(kv[1]), "egress_tiers price", 0, 100);
    } catch (const Error& e) {
      f.fail(e.what());
    }
    if (upto <= last) f.fail("egress_tiers: tier bounds must increase");
    last = upto;
    tiers.emplace_back(upto, priceval);
  }
  if (tiers.empty() || std::isfinite(tiers.back().first))
    f.fail("egress_tiers: the last tier must be 'inf:PRICE'");
  return tiers;
}

ProviderPrices parse_provider(const detail::Fields& f) {
  ProviderPrices p;
  p.provider = text::lower(f.required_str("provider"));
  p.object_storage_gb_month = f.required("object_storage_gb_month", 0, 100);
  p.block_storage_gb_month = f.required("block_storage_gb_month", 0, 100);
  p.block_storage_mbps = f.number("block_storage_mbps", 1, 1e6, 125);
  p.egress_tiers = parse_tiers(f);
  p.cross_zone_gb = f.number("cross_zone_gb", 0, 100, 0);
  p.spot_mtbi_h = f.number("spot_mtbi_h", 0.01, 1e6, 6);
  p.spot_restart_min = f.number("spot_restart_min", 0, 1e4, 10);
  p.price_date = date_field(f, "price_date");
  p.source = std::string(text::trim(f.str("source")));
  return p;
}

void derive(Instance& in, ReservedDiscounts d) {
  if (in.reserved_1y < 0 || in.reserved_1y_derived) {
    in.reserved_1y = in.on_demand * (1 - d.one_year);
    in.reserved_1y_derived = true;
  }
  if (in.reserved_3y < 0 || in.reserved_3y_derived) {
    in.reserved_3y = in.on_demand * (1 - d.three_year);
    in.reserved_3y_derived = true;
  }
  if (in.gpu_link_gbs <= 0 || in.gpu_link_derived) {
    const auto& gpu = detail::GpuCatalog::builtin().get(in.gpu_model);
    in.gpu_link_gbs = detail::derived_link_gbs(gpu, in.interconnect);
    in.gpu_link_derived = true;
  }
}

struct Parsed {
  std::vector<Instance> instances;
  std::vector<ProviderPrices> providers;
};

void check_duplicates(const std::vector<Instance>& rows, const std::string& source) {
  std::unordered_map<std::string, std::size_t> seen;
  seen.reserve(rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& r = rows[i];
    auto [it, fresh] = seen.emplace(detail::row_key(r), i);
    if (!fresh) {
      const auto& first = rows[it->second];
      throw Error(Errc::invalid_argument,
                  source + ": " + r.name + " in " + r.region + " (" + r.provider +
                      ") appears twice: " + first.source.substr(first.source.rfind("row ") + 4) +
                      " and " + r.source.substr(r.source.rfind("row ") + 4));
    }
  }
}

Parsed parse_csv(std::string_view text, const std::string& source) {
  Parsed out;
  // The header says which table this is.
  auto probe = csv::Table::parse(text, source, {});
  const auto& cols = probe.columns();
  bool providers = std::find(cols.begin(), cols.end(), "egress_tiers") != cols.end();
  bool instances = std::find(cols.begin(), cols.end(), "instance") != cols.end();
  if (providers == instances)
    throw Error(Errc::invalid_argument,
                source +
                    ": the header names neither an instance table (provider,instance,region,"
                    "gpu_model,gpus,on_demand,...) nor a provider table (provider,"
                    "object_storage_gb_month,block_storage_gb_month,egress_tiers,...)");
  auto table = csv::Table::parse(text, source, instances ? kInstanceColumns : kProviderColumns);
  for (const auto& row : table.rows()) {
    detail::CsvFields f(row, table);
    if (instances)
      out.instances.push_back(parse_instance(f));
    else
      out.providers.push_back(parse_provider(f));
  }
  return out;
}

Parsed parse_json(std::string_view text, const std::string& source) {
  const auto doc = json::parse(text, source);
  if (!doc.is_object())
    throw Error(Errc::invalid_argument,
                source + ": expected an object {\"instances\": [...], \"providers\": [...]}");
  for (auto it = doc.begin(); it != doc.end(); ++it)
    if (it.key() != "instances" && it.key() != "providers" && it.key() != "comment")
      throw Error(Errc::invalid_argument, source + ": unknown key '" + it.key() +
                                              "': a catalog has instances, providers, comment");
  Parsed out;
  for (const char* key : {"instances", "providers"}) {
    if (!doc.contains(key)) continue;
    const auto& arr = doc[key];
    if (!arr.is_array())
      throw Error(Errc::invalid_argument, source + ": " + key + " must be an array");
    auto lines = detail::json_element_lines(text, key);
    for (std::size_t i = 0; i < arr.size(); ++i) {
      std::size_t line = i < lines.size() ? lines[i] : 0;
      if (!arr[i].is_object())
        throw Error(Errc::invalid_argument, source + ":" + std::to_string(line) + ": " + key + "[" +
                                                std::to_string(i) + "] is not an object");
      detail::JsonFields f(arr[i], source, line);
      if (std::string(key) == "instances")
        out.instances.push_back(parse_instance(f));
      else
        out.providers.push_back(parse_provider(f));
    }
  }
  if (out.instances.empty() && out.providers.empty())
    throw Error(Errc::invalid_argument, source + ": the catalog has no instances and no providers");
  return out;
}

Parsed parse_any(std::string_view text, const std::string& source, bool json) {
  return json ? parse_json(text, source) : parse_csv(text, source);
}

bool looks_like_json(std::string_view text) {
  auto t = text::trim(text);
  return !t.empty() && t.front() == '{';
}

}  // namespace

double Instance::price(Pricing p) const {
  switch (p) {
    case Pricing::on_demand:
      return on_demand;
    case Pricing::spot:
      return spot;
    case Pricing::reserved_1y:
      return reserved_1y;
    case Pricing::reserved_3y:
      return reserved_3y;
  }
  return -1;
}

Catalog::Catalog() : Catalog(builtin()) {}

Catalog::Catalog(NoInstances) {
  auto parsed = parse_csv(embedded::cost_providers_csv(), "embedded providers.csv");
  providers_ = std::move(parsed.providers);
  sources_.push_back("embedded providers.csv");
  changed();
}

Catalog Catalog::empty(ReservedDiscounts discounts) {
  Catalog c{NoInstances{}};
  c.set_reserved_discounts(discounts);
  return c;
}

Catalog Catalog::builtin(ReservedDiscounts discounts) {
  // The embedded snapshot alone, imported once; each call returns a copy the caller may extend.
  static const Catalog base = [] {
    CatalogPaths snapshot_only;
    snapshot_only.use_cache = snapshot_only.use_skypilot = false;
    return current(snapshot_only);
  }();
  Catalog c = base;
  if (discounts.one_year != c.discounts_.one_year ||
      discounts.three_year != c.discounts_.three_year)
    c.set_reserved_discounts(discounts);
  return c;
}

void Catalog::set_reserved_discounts(ReservedDiscounts d) {
  for (double v : {d.one_year, d.three_year})
    if (!(v >= 0 && v < 1))
      throw Error(Errc::invalid_argument, "reserved discount " + std::to_string(v) +
                                              " is out of range: give a fraction in [0, 1), "
                                              "e.g. 0.4 for 40% off");
  discounts_ = d;
  for (auto& in : instances_) derive(in, discounts_);
  changed();
}

void Catalog::load_file(const std::string& path, bool replace) {
  const auto file = files::read_small_file(path, csv::kMaxBytes, "catalog file");
  const auto name = text::lower(path);
  const bool json =
      name.ends_with(".json") || (!name.ends_with(".csv") && looks_like_json(file.bytes));
  auto parsed = parse_any(file.bytes, path, json);
  merge(std::move(parsed.instances), std::move(parsed.providers), path, replace);
}

void Catalog::load_text(std::string_view text, const std::string& source, bool replace) {
  auto parsed = parse_any(text, source, looks_like_json(text));
  merge(std::move(parsed.instances), std::move(parsed.providers), source, replace);
}

void Catalog::merge(std::vector<Instance> rows, std::vector<ProviderPrices> providers,
                    const std::string& source, bool replace) {
  check_duplicates(rows, source);
  // Commit only after everything was checked: a bad file leaves the catalog as it was.
  Catalog next = *this;
  if (replace && !rows.empty()) next.instances_.clear();
  next.add_rows(std::move(rows));
  for (auto& p : providers) {
    auto it = std::find_if(next.providers_.begin(), next.providers_.end(),
                           [&](const ProviderPrices& q) { return q.provider == p.provider; });
    if (it != next.providers_.end())
      *it = std::move(p);
    else
      next.providers_.push_back(std::move(p));
  }
  next.sources_.push_back(source);
  next.changed();
  *this = std::move(next);
}

void Catalog::add(Instance in) {
  std::vector<Instance> rows;
  rows.push_back(std::move(in));
  add_rows(std::move(rows));
  changed();
}

void Catalog::changed() {
  compiled_ = detail::compile_catalog(*this);
}

void Catalog::add_rows(std::vector<Instance> rows) {
  // Where each key is: one lookup a row, so that loading is linear in the rows.
  std::unordered_map<std::string, std::size_t> at;
  at.reserve(instances_.size() + rows.size());
  for (std::size_t i = 0; i < instances_.size(); ++i) at.emplace(detail::row_key(instances_[i]), i);
  instances_.reserve(instances_.size() + rows.size());
  for (auto& in : rows) {
    // Every row from every path (sources, user catalogs, overlays): no name with a control
    // character or a line break reaches a table, a job file or a URL.
    if (const auto why = sources::check_names(in); !why.empty())
      throw Error(Errc::invalid_argument, printable(in.source) + ": " + why);
    if (in.gpus <= 0) throw Error(Errc::invalid_argument, in.name + ": gpus must be at least 1");
    if (!(in.on_demand > 0))
      throw Error(Errc::invalid_argument, in.name + ": the on-demand price must be positive");
    if (in.spot > in.on_demand)
      throw Error(Errc::invalid_argument,
                  in.name + ": the spot price is above the on-demand price");
    detail::GpuCatalog::builtin().get(in.gpu_model);  // throws naming the known models
    derive(in, discounts_);
    auto [it, fresh] = at.emplace(detail::row_key(in), instances_.size());
    if (fresh)
      instances_.push_back(std::move(in));
    else
      instances_[it->second] = std::move(in);
  }
}

const Instance* Catalog::find(std::string_view name, std::string_view region) const {
  const Instance* best = nullptr;
  for (const auto& in : instances_)
    if (text::iequals(in.name, name) && (region.empty() || text::iequals(in.region, region)) &&
        (!best || in.on_demand < best->on_demand))
      best = &in;
  return best;
}

const Instance& Catalog::get(std::string_view name, std::string_view region) const {
  if (const auto* in = find(name, region)) return *in;
  std::vector<std::string> close;
  auto lname = text::lower(name);
  auto prefix = lname.substr(0, lname.find('.'));
  for (const auto& in : instances_)
    if (text::lower(in.name).starts_with(prefix) &&
        std::find(close.begin(), close.end(), in.name) == close.end())
      close.push_back(in.name);
  std::string msg = "unknown instance '" + std::string(name) + "'";
  if (!region.empty()) msg += " in region '" + std::string(region) + "'";
  msg +=
      close.empty() ? "; `nubo-cost catalog` lists them" : "; similar: " + text::join(close, ", ");
  throw Error(Errc::not_found, msg);
}

const ProviderPrices& Catalog::provider(std::string_view name, bool* fallback) const {
  for (const auto& p : providers_)
    if (p.provider == text::lower(name)) {
      if (fallback) *fallback = false;
      return p;
    }
  for (const auto& p : providers_)
    if (p.provider == "aws") {
      if (fallback) *fallback = true;
      return p;
    }
  throw Error(Errc::not_found, "no storage and network prices for provider '" + std::string(name) +
                                   "' (and no aws row to fall back on)");
}

}  // namespace nubo::cost
