// The cost catalog through the C ABI: the built-in catalog, user files, and its rows.
#include <memory>

#include "cost_handles.hpp"
#include "guard.hpp"
#include "nubo.h"
#include "sized_struct.hpp"

namespace nubo::capi {

void refresh(CostCatalog& c) {
  c.interconnects.clear();
  for (const auto& in : c.catalog.instances())
    c.interconnects.emplace_back(nubo::cost::interconnect_name(in.interconnect));
  c.skipped.clear();
  for (const auto& s : c.catalog.source_info()) {
    std::string text;
    for (const auto& k : s.skipped) text += k.where + ": " + k.reason + "\n";
    c.skipped.push_back(std::move(text));
  }
}

namespace {

nubo_status make_catalog(const char* function, nubo_cost_catalog** out,
                         nubo::cost::Catalog (*make)(const char*), const char* arg) {
  return guard(function, [&] {
    *require(out, "out") = nullptr;
    auto c = std::make_unique<CostCatalog>();
    c->catalog = make(arg);
    refresh(*c);
    *out = to_handle(c.release());
  });
}

}  // namespace

}  // namespace nubo::capi

extern "C" {

NUBO_C_API nubo_status nubo_cost_catalog_builtin(nubo_cost_catalog** out) {
  return nubo::capi::make_catalog(
      "nubo_cost_catalog_builtin", out, [](const char*) { return nubo::cost::Catalog::builtin(); },
      nullptr);
}

NUBO_C_API nubo_status nubo_cost_catalog_current(const char* cache_dir, nubo_cost_catalog** out) {
  return nubo::capi::make_catalog(
      "nubo_cost_catalog_current", out,
      [](const char* dir) {
        nubo::cost::CatalogPaths paths;
        if (dir) paths.cache_dir = dir;
        return nubo::cost::Catalog::current(paths);
      },
      cache_dir);
}

NUBO_C_API nubo_status nubo_cost_catalog_import(nubo_cost_catalog* catalog, const char* path,
                                                const char* format, const char* provider) {
  return nubo::capi::guard("nubo_cost_catalog_import", [&] {
    auto& c = nubo::capi::require_catalog(catalog);
    nubo::cost::CatalogSource source;
    source.format = nubo::capi::require(format, "format");
    source.provider = nubo::capi::require(provider, "provider");
    c.catalog.import_file(nubo::capi::require(path, "path"), source);
    nubo::capi::refresh(c);
  });
}

NUBO_C_API size_t nubo_cost_catalog_source_count(const nubo_cost_catalog* catalog) {
  if (!catalog) return 0;
  return reinterpret_cast<const nubo::capi::CostCatalog*>(catalog)->catalog.source_info().size();
}

NUBO_C_API nubo_status nubo_cost_catalog_source(const nubo_cost_catalog* catalog, size_t index,
                                                nubo_cost_source_info* out) {
  return nubo::capi::guard("nubo_cost_catalog_source", [&] {
    const auto& c = nubo::capi::require_catalog(catalog);
    nubo::capi::require(out, "out");
    const auto& list = c.catalog.source_info();
    const auto& s = list[nubo::capi::require_index(index, list.size(), "the catalog", "sources")];
    nubo_cost_source_info info{};
    info.name = s.name.c_str();
    info.format = s.format.c_str();
    info.provider = s.provider.c_str();
    info.url = s.url.c_str();
    info.origin = s.origin.c_str();
    info.fetched = s.fetched.c_str();
    info.etag = s.etag.c_str();
    info.rows = s.rows;
    info.records = s.records;
    info.skipped_count = s.skipped.size();
    info.skipped = c.skipped[index].c_str();
    info.age_days = s.age_days();
    nubo::capi::write_sized(info, out, "out", "nubo_cost_source_info");
  });
}

NUBO_C_API int nubo_cost_gpu_model_matches(const char* model, const char* filter) {
  if (!model) return 0;
  return nubo::cost::gpu_model_matches(model, filter ? filter : "") ? 1 : 0;
}

NUBO_C_API nubo_status nubo_cost_catalog_load(nubo_cost_catalog* catalog, const char* path,
                                              int replace) {
  return nubo::capi::guard("nubo_cost_catalog_load", [&] {
    auto& c = nubo::capi::require_catalog(catalog);
    c.catalog.load_file(nubo::capi::require(path, "path"), replace != 0);
    nubo::capi::refresh(c);
  });
}

NUBO_C_API nubo_status nubo_cost_catalog_set_reserved_discounts(nubo_cost_catalog* catalog,
                                                                double one_year,
                                                                double three_year) {
  return nubo::capi::guard("nubo_cost_catalog_set_reserved_discounts", [&] {
    nubo::capi::require_catalog(catalog).catalog.set_reserved_discounts(
        {.one_year = one_year, .three_year = three_year});
  });
}

NUBO_C_API void nubo_cost_catalog_free(nubo_cost_catalog* catalog) {
  delete reinterpret_cast<nubo::capi::CostCatalog*>(catalog);
}

NUBO_C_API size_t nubo_cost_catalog_instance_count(const nubo_cost_catalog* catalog) {
  if (!catalog) return 0;
  return reinterpret_cast<const nubo::capi::CostCatalog*>(catalog)->catalog.instances().size();
}

NUBO_C_API nubo_status nubo_cost_catalog_instance(const nubo_cost_catalog* catalog, size_t index,
                                                  nubo_cost_instance_info* out) {
  return nubo::capi::guard("nubo_cost_catalog_instance", [&] {
    const auto& c = nubo::capi::require_catalog(catalog);
    nubo::capi::require(out, "out");
    const auto& rows = c.catalog.instances();
    const auto& in =
        rows[nubo::capi::require_index(index, rows.size(), "the catalog", "instances")];
    nubo_cost_instance_info info{};
    info.provider = in.provider.c_str();
    info.name = in.name.c_str();
    info.region = in.region.c_str();
    info.gpu_model = in.gpu_model.c_str();
    info.gpus = in.gpus;
    info.interconnect = c.interconnects[index].c_str();
    info.vcpus = in.vcpus;
    info.memory_gib = in.memory_gib;
    info.network_gbps = in.network_gbps;
    info.on_demand = in.on_demand;
    info.spot = in.spot;
    info.reserved_1y = in.reserved_1y;
    info.reserved_3y = in.reserved_3y;
    info.reserved_1y_derived = in.reserved_1y_derived;
    info.reserved_3y_derived = in.reserved_3y_derived;
    info.gpu_link_gbs = in.gpu_link_gbs;
    info.price_date = in.price_date.c_str();
    info.spot_date = in.spot_date.c_str();
    info.source = in.source.c_str();
    info.spot_lowest = in.spot_lowest;
    info.spot_quotes = in.spot_quotes;
    info.interruption_band = in.interruption_band.c_str();
    info.spot_mtbi_h = in.spot_mtbi_h;
    nubo::capi::write_sized(info, out, "out", "nubo_cost_instance_info");
  });
}

}  // extern "C"
