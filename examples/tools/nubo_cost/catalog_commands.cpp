// nubo-cost catalog: the offers, the sources they came from, and `catalog update`.
#include <iostream>
#include <set>

#include <nlohmann/json.hpp>

#include "catalog_load.hpp"
#include "commands.hpp"
#include "flag_values.hpp"
#include "nubo/cost.hpp"
#include "nubo/error.hpp"
#include "nubo/units.hpp"
#include "text_table.hpp"

namespace nubo_cost {
namespace {

using namespace nubo::cost;

std::string money_or_dash(double v) {
  return v < 0 ? "-" : format_money(v);
}

std::string lower(std::string s) {
  for (auto& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

int print_sources(const Catalog& catalog, const CatalogCommand& c) {
  if (c.json) {
    nlohmann::json arr = nlohmann::json::array();
    const auto rows = [](const std::vector<SkippedRow>& list) {
      nlohmann::json out = nlohmann::json::array();
      for (const auto& k : list) out.push_back({{"where", k.where}, {"reason", k.reason}});
      return out;
    };
    for (const auto& s : catalog.source_info()) {
      arr.push_back({{"name", s.name},
                     {"format", s.format},
                     {"provider", s.provider},
                     {"url", s.url},
                     {"origin", s.origin},
                     {"fetched", s.fetched},
                     {"etag", s.etag},
                     {"rows", s.rows},
                     {"records", s.records},
                     {"skipped", rows(s.skipped)},
                     {"corrected", rows(s.corrected)}});
    }
    std::cout << nlohmann::json{{"sources", arr}}.dump(2) << "\n";
    return 0;
  }
  TextTable t({"source", "format", "from", "fetched", ">rows", ">skipped"});
  for (const auto& s : catalog.source_info())
    t.add({s.name, s.format, s.origin, s.fetched.empty() ? "?" : s.fetched.substr(0, 10),
           std::to_string(s.rows), std::to_string(s.skipped.size())});
  std::cout << t.str();
  // What was skipped, and why, grouped by reason so a thousand rows of one kind take a line.
  for (const auto& s : catalog.source_info()) {
    if (s.skipped.empty()) continue;
    std::map<std::string, std::pair<std::size_t, std::string>> by_reason;
    for (const auto& k : s.skipped) {
      // The reason without the instance's name, which differs row by row.
      auto colon = k.reason.find(": ");
      auto key = colon == std::string::npos ? k.reason : k.reason.substr(colon + 2);
      auto& e = by_reason[key];
      if (e.first++ == 0) e.second = k.where + ": " + k.reason;
    }
    std::cout << "\n"
              << s.name << " skipped " << s.skipped.size() << " of " << s.records << " records:\n";
    for (const auto& [reason, e] : by_reason)
      std::cout << "  " << e.first << " x " << reason << " (first: " << e.second << ")\n";
  }
  for (const auto& s : catalog.source_info()) {
    if (s.corrected.empty()) continue;
    std::cout << "\n" << s.name << " corrected by known instance facts:\n";
    for (const auto& k : s.corrected) std::cout << "  " << k.where << ": " << k.reason << "\n";
  }
  return 0;
}

}  // namespace

int run(const CatalogCommand& c) {
  auto catalog = load_catalog(c.catalog);
  if (c.sources) return print_sources(catalog, c);
  std::vector<const Instance*> rows;
  for (const auto& in : catalog.instances()) {
    if (!gpu_model_matches(in.gpu_model, c.gpu)) continue;
    if (!c.provider.empty() && in.provider != lower(c.provider)) continue;
    if (!c.region.empty() && lower(in.region) != lower(c.region)) continue;
    rows.push_back(&in);
  }
  if (rows.empty()) {
    std::set<std::string> models;
    for (const auto& in : catalog.instances())
      if ((c.provider.empty() || in.provider == lower(c.provider)) &&
          (c.region.empty() || lower(in.region) == lower(c.region)))
        models.insert(in.gpu_model);
    std::string list;
    for (const auto& m : models) list += (list.empty() ? "" : ", ") + m;
    throw nubo::Error(
        nubo::Errc::not_found,
        "no offer matches" + (c.gpu.empty() ? "" : " --gpu " + c.gpu) +
            (c.provider.empty() ? "" : " --provider " + c.provider) +
            (c.region.empty() ? "" : " --region " + c.region) +
            (models.empty() ? std::string() : "; GPU models with offers there: " + list));
  }
  if (c.json) {
    nlohmann::json arr = nlohmann::json::array();
    for (const auto* in : rows)
      arr.push_back({{"provider", in->provider},
                     {"instance", in->name},
                     {"region", in->region},
                     {"gpu_model", in->gpu_model},
                     {"gpus", in->gpus},
                     {"interconnect", interconnect_name(in->interconnect)},
                     {"vcpus", in->vcpus},
                     {"memory_gib", in->memory_gib},
                     {"network_gbps", in->network_gbps},
                     {"on_demand", in->on_demand},
                     {"spot", in->spot < 0 ? nlohmann::json(nullptr) : nlohmann::json(in->spot)},
                     {"spot_lowest", in->spot_lowest < 0 ? nlohmann::json(nullptr)
                                                         : nlohmann::json(in->spot_lowest)},
                     {"spot_quotes", in->spot_quotes},
                     {"interruption_band", in->interruption_band},
                     {"spot_mtbi_h", in->spot_mtbi_h},
                     {"reserved_1y", in->reserved_1y},
                     {"reserved_1y_derived", in->reserved_1y_derived},
                     {"reserved_3y", in->reserved_3y},
                     {"reserved_3y_derived", in->reserved_3y_derived},
                     {"gpu_link_gbs", in->gpu_link_gbs},
                     {"price_date", in->price_date},
                     {"spot_date", in->spot_date},
                     {"source", in->source}});
    std::cout << nlohmann::json{{"instances", arr}, {"sources", catalog.sources()}}.dump(2) << "\n";
    return 0;
  }
  TextTable t({"provider", "instance", "region", "GPUs", "link", ">net Gb/s", ">on-demand", ">spot",
               "interrupts", ">1y", ">3y", "prices"});
  for (const auto* in : rows)
    t.add({in->provider, in->name, in->region, std::to_string(in->gpus) + "x " + in->gpu_model,
           std::string(interconnect_name(in->interconnect)),
           in->network_gbps > 0 ? fixed(in->network_gbps, 0) : "-", format_money(in->on_demand),
           money_or_dash(in->spot), in->interruption_band.empty() ? "-" : in->interruption_band,
           format_money(in->reserved_1y) + (in->reserved_1y_derived ? "*" : ""),
           format_money(in->reserved_3y) + (in->reserved_3y_derived ? "*" : ""),
           in->price_date.empty() ? "?" : in->price_date});
  std::cout << t.str() << "\n"
            << rows.size() << " offers; $/h per instance; spot is the median of the zones' "
            << "quotes. * derived: " << percent(catalog.reserved_discounts().one_year)
            << " (1y) and " << percent(catalog.reserved_discounts().three_year)
            << " (3y) off on-demand; --reserved-discount changes it.\n"
            << price_age_text(catalog, c.catalog);
  return 0;
}

int run(const UpdateCommand& c) {
  CatalogUpdateOptions o;
  o.cache_dir = c.cache;
  o.sources = c.sources;
  o.timeout_s = nubo::parse_duration(c.timeout, "--timeout");
  if (o.timeout_s <= 0) bad("--timeout: must be longer than 0");
  for (const auto& u : c.urls) {
    const auto eq = u.find('=');
    if (eq == std::string::npos || eq == 0) bad("--url: expected NAME=URL, got '" + u + "'");
    o.urls[u.substr(0, eq)] = u.substr(eq + 1);
  }
  const auto results = update_catalog(o);
  bool refreshed = false;
  for (const auto& r : results) refreshed = refreshed || r.status != UpdateStatus::failed;
  if (c.json) {
    nlohmann::json arr = nlohmann::json::array();
    for (const auto& r : results)
      arr.push_back({{"name", r.name},
                     {"url", r.url},
                     {"status", update_status_name(r.status)},
                     {"message", r.message},
                     {"records", r.records},
                     {"skipped", r.skipped},
                     {"fetched", r.fetched}});
    std::cout << nlohmann::json{{"sources", arr}}.dump(2) << "\n";
  } else {
    TextTable t({"source", "status", "fetched", "detail"});
    for (const auto& r : results)
      t.add({r.name, std::string(update_status_name(r.status)), r.fetched.empty() ? "-" : r.fetched,
             r.message});
    std::cout << t.str();
    if (!refreshed) std::cout << "No source could be refreshed.\n";
  }
  return refreshed ? 0 : 1;
}

}  // namespace nubo_cost
