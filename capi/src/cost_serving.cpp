// Serving plans through the C ABI.
#include <memory>

#include "cost_handles.hpp"
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

nubo_cost_serving default_serving() {
  const nubo::cost::InferenceWorkload cpp;  // the C defaults are the C++ defaults
  nubo_cost_serving s{};
  s.struct_size = sizeof s;
  s.dtype = static_cast<nubo_dtype>(cpp.dtype);
  s.context_tokens = cpp.context_tokens;
  s.memory_efficiency = cpp.memory_efficiency;
  return s;
}

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
    nubo::capi::init_sized(nubo::capi::default_serving(), serving, struct_size,
                           "nubo_cost_serving");
  });
}

NUBO_C_API nubo_status nubo_cost_serving_plan_create(const nubo_cost_catalog* catalog,
                                                     const nubo_cost_serving* serving,
                                                     const nubo_cost_plan_options* options,
                                                     nubo_cost_serving_plan** out) {
  return nubo::capi::guard("nubo_cost_serving_plan_create", [&] {
    *nubo::capi::require(out, "out") = nullptr;
    const auto& c = nubo::capi::require_catalog(catalog);
    const auto s = nubo::capi::read_sized(*nubo::capi::require(serving, "serving"),
                                          nubo::capi::default_serving(), "serving",
                                          "nubo_cost_serving_init()");
    if (s.dtype < NUBO_DTYPE_F32 || s.dtype > NUBO_DTYPE_TF32)
      throw nubo::Error(nubo::Errc::invalid_argument,
                        "serving->dtype " + std::to_string(s.dtype) + " is not a nubo_dtype");
    nubo::cost::InferenceWorkload w;
    w.parameters = s.parameters;
    w.dtype = static_cast<nubo::DType>(s.dtype);
    w.bytes_per_parameter = s.bytes_per_parameter;
    w.tokens_per_s = s.tokens_per_s;
    w.requests_per_s = s.requests_per_s;
    w.tokens_per_request = s.tokens_per_request;
    w.context_tokens = s.context_tokens;
    w.latency_s = s.latency_s;
    w.kv_bytes_per_token = s.kv_bytes_per_token;
    w.memory_efficiency = s.memory_efficiency;
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
