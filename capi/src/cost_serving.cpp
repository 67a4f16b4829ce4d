// Serving plans through the C ABI.
#include <memory>

#include "cost_handles.hpp"
#include "guard.hpp"
#include "nubo.h"
#include "sized_struct.hpp"

namespace nubo::capi {
namespace {

struct ServingPlanHandle {
  nubo::cost::ServingPlan plan;
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
    *out = reinterpret_cast<nubo_cost_serving_plan*>(h.release());
  });
}

NUBO_C_API void nubo_cost_serving_plan_free(nubo_cost_serving_plan* plan) {
  delete reinterpret_cast<nubo::capi::ServingPlanHandle*>(plan);
}

NUBO_C_API size_t nubo_cost_serving_plan_count(const nubo_cost_serving_plan* plan) {
  return plan ? nubo::capi::require_serving(plan).plan.ranked.size() : 0;
}

NUBO_C_API size_t nubo_cost_serving_plan_exclusion_count(const nubo_cost_serving_plan* plan) {
  return plan ? nubo::capi::require_serving(plan).plan.exclusions.size() : 0;
}

NUBO_C_API nubo_status nubo_cost_serving_plan_option(const nubo_cost_serving_plan* plan,
                                                     size_t index, nubo_cost_serving_info* out) {
  return nubo::capi::guard("nubo_cost_serving_plan_option", [&] {
    const auto& p = nubo::capi::require_serving(plan).plan;
    nubo::capi::require(out, "out");
    const auto& o =
        p.ranked[nubo::capi::require_index(index, p.ranked.size(), "the plan", "options")];
    nubo_cost_serving_info i{};
    i.provider = o.provider.c_str();
    i.instance = o.instance.c_str();
    i.region = o.region.c_str();
    i.gpu_model = o.gpu_model.c_str();
    i.gpus_per_node = o.gpus_per_node;
    i.instances = o.instances;
    i.pricing = static_cast<nubo_cost_pricing>(o.pricing);
    i.gpus_per_replica = o.gpus_per_replica;
    i.replicas_per_instance = o.replicas_per_instance;
    i.batch = o.batch;
    i.token_latency_s = o.token_latency_s;
    i.tokens_per_s = o.tokens_per_s;
    i.hourly = o.hourly;
    i.dollars_per_million_tokens = o.dollars_per_million_tokens;
    i.price_date = o.price_date.c_str();
    i.price_source = o.price_source.c_str();
    nubo::capi::write_sized(i, out, "out", "nubo_cost_serving_info");
  });
}

NUBO_C_API nubo_status nubo_cost_serving_plan_exclusion(const nubo_cost_serving_plan* plan,
                                                        size_t index,
                                                        nubo_cost_exclusion_info* out) {
  return nubo::capi::guard("nubo_cost_serving_plan_exclusion", [&] {
    const auto& p = nubo::capi::require_serving(plan).plan;
    nubo::capi::require(out, "out");
    const auto& x = p.exclusions[nubo::capi::require_index(index, p.exclusions.size(), "the plan",
                                                           "exclusions")];
    nubo_cost_exclusion_info info{};
    info.subject = x.subject.c_str();
    info.reason = x.reason.c_str();
    info.options = x.options;
    nubo::capi::write_sized(info, out, "out", "nubo_cost_exclusion_info");
  });
}

}  // extern "C"
