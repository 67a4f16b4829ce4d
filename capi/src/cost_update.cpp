// Refreshing the catalog through the C ABI: nubo_cost_catalog_update and its answers.
#include <memory>
#include <sstream>

#include "generated/results.hpp"
#include "guard.hpp"
#include "nubo.h"
#include "nubo/cost.hpp"
#include "nubo/error.hpp"
#include "records.hpp"
#include "sized_struct.hpp"

namespace nubo::capi {
namespace {

struct CostUpdate {
  std::vector<nubo::cost::CatalogUpdate> entries;
  Records<nubo_cost_update_info> records;
};

nubo_cost_update_options default_update_options() {
  const nubo::cost::CatalogUpdateOptions cpp;
  nubo_cost_update_options o{};
  o.struct_size = sizeof o;
  o.timeout_s = cpp.timeout_s;
  o.total_timeout_s = cpp.total_timeout_s;
  o.max_skipped = cpp.max_skipped;
  return o;
}

std::vector<std::string> words(const char* text) {
  std::vector<std::string> out;
  if (!text) return out;
  std::istringstream in(text);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

const CostUpdate& require_update(const nubo_cost_update* u) {
  if (!u) throw Error(Errc::invalid_argument, "update is NULL");
  return *reinterpret_cast<const CostUpdate*>(u);
}

}  // namespace
}  // namespace nubo::capi

extern "C" {

NUBO_C_API nubo_status nubo_cost_update_options_init(nubo_cost_update_options* options,
                                                     size_t struct_size) {
  return nubo::capi::guard("nubo_cost_update_options_init", [&] {
    nubo::capi::require(options, "options");
    nubo::capi::init_sized(nubo::capi::default_update_options(), options, struct_size,
                           "nubo_cost_update_options");
  });
}

NUBO_C_API nubo_status nubo_cost_catalog_update(const nubo_cost_update_options* options,
                                                nubo_cost_update** out) {
  return nubo::capi::guard("nubo_cost_catalog_update", [&] {
    *nubo::capi::require(out, "out") = nullptr;
    const auto o = options ? nubo::capi::read_sized(*options, nubo::capi::default_update_options(),
                                                    "options", "nubo_cost_update_options_init()")
                           : nubo::capi::default_update_options();
    nubo::cost::CatalogUpdateOptions cpp;
    if (o.cache_dir) cpp.cache_dir = o.cache_dir;
    cpp.sources = nubo::capi::words(o.sources);
    for (const auto& entry : nubo::capi::words(o.urls)) {
      const auto eq = entry.find('=');
      if (eq == std::string::npos || eq == 0)
        throw nubo::Error(nubo::Errc::invalid_argument,
                          "options->urls: '" + entry + "' is not NAME=URL");
      cpp.urls[entry.substr(0, eq)] = entry.substr(eq + 1);
    }
    cpp.timeout_s = o.timeout_s;
    cpp.total_timeout_s = o.total_timeout_s;
    cpp.max_skipped = o.max_skipped;
    auto u = std::make_unique<nubo::capi::CostUpdate>();
    u->entries = nubo::cost::update_catalog(cpp);
    u->records = {u->entries, nubo::capi::to_nubo_cost_update_info};
    *out = reinterpret_cast<nubo_cost_update*>(u.release());
  });
}

NUBO_C_API size_t nubo_cost_update_count(const nubo_cost_update* update) {
  return update ? nubo::capi::require_update(update).records.size() : 0;
}

NUBO_C_API nubo_status nubo_cost_update_entry(const nubo_cost_update* update, size_t index,
                                              nubo_cost_update_info* out) {
  return nubo::capi::guard("nubo_cost_update_entry", [&] {
    nubo::capi::require_update(update).records.read(index, out, "the update", "sources",
                                                    "nubo_cost_update_info");
  });
}

NUBO_C_API void nubo_cost_update_free(nubo_cost_update* update) {
  delete reinterpret_cast<nubo::capi::CostUpdate*>(update);
}

}  // extern "C"
