// Serving plans through the C ABI.
#include <memory>

#include "cost_handles.hpp"
#include "generated/options.hpp"
#include "generated/results.hpp"
#include "guard.hpp"
#include "nubo.h"
#include "sized_struct.hpp"

namespace nubo::capi {
namespace {

struct ServingPlanHandle {
  nubo::cost::ServingPlan plan;
  Records<nubo_cost_serving_info> options;
  Records<nubo_cost_exclusion_info> exclusions;
};

const ServingPlanHandle& require_serving(const nubo_cost_serving_plan* p) {
  if (!p) throw Error(Errc::invalid_argument, "plan is NULL");
  return *reinterpret_cast<const ServingPlanHandle*>(p);
}

}  // namespace
}  // namespace nubo::capi

extern "C" {

NUBO_C_API nubo_status nubo_cost_serving_init(nubo_cost_serving* serving, size_t struct_size) {
  return nubo::capi::guard("nubo_cost_serving_init", [&] {
    nubo::capi::require(serving, "serving");
    nubo::capi::init_options(serving, struct_size);
  });
}

NUBO_C_API nubo_status nubo_cost_serving_plan_create(const nubo_cost_catalog* catalog,
                                                     const nubo_cost_serving* serving,
                                                     const nubo_cost_plan_options* options,
                                                     nubo_cost_serving_plan** out) {
  return nubo::capi::guard("nubo_cost_serving_plan_create", [&] {
    *nubo::capi::require(out, "out") = nullptr;
    const auto& c = nubo::capi::require_catalog(catalog);
    const auto w = nubo::capi::read_options(nubo::capi::require(serving, "serving"), "serving");
    auto h = std::make_unique<nubo::capi::ServingPlanHandle>();
    h->plan = nubo::cost::plan_serving(c.catalog, w, nubo::capi::to_request(options, w.dtype));
    h->options = {h->plan.ranked, nubo::capi::to_nubo_cost_serving_info};
    h->exclusions = {h->plan.exclusions, nubo::capi::to_nubo_cost_exclusion_info};
    *out = reinterpret_cast<nubo_cost_serving_plan*>(h.release());
  });
}

NUBO_C_API void nubo_cost_serving_plan_free(nubo_cost_serving_plan* plan) {
  delete reinterpret_cast<nubo::capi::ServingPlanHandle*>(plan);
}

NUBO_C_API size_t nubo_cost_serving_plan_count(const nubo_cost_serving_plan* plan) {
  return plan ? nubo::capi::require_serving(plan).options.size() : 0;
}

NUBO_C_API size_t nubo_cost_serving_plan_exclusion_count(const nubo_cost_serving_plan* plan) {
  return plan ? nubo::capi::require_serving(plan).exclusions.size() : 0;
}

NUBO_C_API nubo_status nubo_cost_serving_plan_option(const nubo_cost_serving_plan* plan,
                                                     size_t index, nubo_cost_serving_info* out) {
  return nubo::capi::guard("nubo_cost_serving_plan_option", [&] {
    nubo::capi::require_serving(plan).options.read(index, out, "the plan", "options",
                                                   "nubo_cost_serving_info");
  });
}

NUBO_C_API nubo_status nubo_cost_serving_plan_exclusion(const nubo_cost_serving_plan* plan,
                                                        size_t index,
                                                        nubo_cost_exclusion_info* out) {
  return nubo::capi::guard("nubo_cost_serving_plan_exclusion", [&] {
    nubo::capi::require_serving(plan).exclusions.read(index, out, "the plan", "exclusions",
                                                      "nubo_cost_exclusion_info");
  });
}

}  // extern "C"
