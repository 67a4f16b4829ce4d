// The cost catalog through the C ABI: the built-in catalog, user files, and its rows.
#include <memory>

#include "cost_handles.hpp"
#include "generated/results.hpp"
#include "guard.hpp"
#include "nubo.h"

namespace nubo::capi {

void refresh(CostCatalog& c) {
  c.instances = {c.catalog.instances(), to_nubo_cost_instance_info};
  c.sources = {c.catalog.source_info(), to_nubo_cost_source_info};
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
  return catalog ? nubo::capi::require_catalog(catalog).sources.size() : 0;
}

NUBO_C_API nubo_status nubo_cost_catalog_source(const nubo_cost_catalog* catalog, size_t index,
                                                nubo_cost_source_info* out) {
  return nubo::capi::guard("nubo_cost_catalog_source", [&] {
    nubo::capi::require_catalog(catalog).sources.read(index, out, "the catalog", "sources",
                                                      "nubo_cost_source_info");
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
    auto& c = nubo::capi::require_catalog(catalog);
    c.catalog.set_reserved_discounts({.one_year = one_year, .three_year = three_year});
    nubo::capi::refresh(c);
  });
}

NUBO_C_API void nubo_cost_catalog_free(nubo_cost_catalog* catalog) {
  delete reinterpret_cast<nubo::capi::CostCatalog*>(catalog);
}

NUBO_C_API size_t nubo_cost_catalog_instance_count(const nubo_cost_catalog* catalog) {
  return catalog ? nubo::capi::require_catalog(catalog).instances.size() : 0;
}

NUBO_C_API nubo_status nubo_cost_catalog_instance(const nubo_cost_catalog* catalog, size_t index,
                                                  nubo_cost_instance_info* out) {
  return nubo::capi::guard("nubo_cost_catalog_instance", [&] {
    nubo::capi::require_catalog(catalog).instances.read(index, out, "the catalog", "instances",
                                                        "nubo_cost_instance_info");
  });
}

}  // extern "C"
