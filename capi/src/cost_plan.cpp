// Workloads, plans and estimates through the C ABI.
#include <cstring>
#include <memory>
#include <string>

#include "cost_handles.hpp"
#include "generated/results.hpp"
#include "guard.hpp"
#include "nubo.h"
#include "sized_struct.hpp"
#include "text_out.hpp"

namespace nubo::capi {
namespace {

using nubo::Errc;
using nubo::Error;
namespace cost = nubo::cost;

nubo_cost_workload default_workload() {
  const cost::Workload cpp;  // the C defaults are the C++ defaults
  nubo_cost_workload w{};
  w.struct_size = sizeof w;
  // Every field C shares with C++, so that no default is stated twice.
  w.total_flops = cpp.total_flops;
  w.flops_per_sample = cpp.flops_per_sample;
  w.samples = cpp.samples;
  w.epochs = cpp.epochs;
  w.global_batch = cpp.global_batch;
  w.dtype = static_cast<nubo_dtype>(cpp.dtype);
  w.mfu = cpp.mfu;
  w.parameter_bytes = cpp.parameter_bytes;
  w.memory_per_gpu_bytes = cpp.memory_per_gpu_bytes;
  w.dataset_bytes = cpp.dataset_bytes;
  w.compression_ratio = cpp.compression_ratio;
  w.checkpoint_bytes = cpp.checkpoint_bytes;
  w.checkpoint_write_mbps = cpp.checkpoint_write_mbps;
  w.checkpoint_interval_s = cpp.checkpoint_interval_s;
  w.overlap = cpp.overlap;
  w.egress_bytes = cpp.egress_bytes;
  w.storage_months_after = cpp.storage_months_after;
  w.parameters = cpp.parameters;
  w.tokens = cpp.tokens;
  w.sequence_length = cpp.sequence_length;
  w.micro_batch = cpp.micro_batch;
  w.optimizer = static_cast<nubo_cost_optimizer>(cpp.optimizer);
  w.sharding = cpp.sharding;
  return w;
}

nubo_cost_plan_options default_options() {
  const cost::PlanRequest cpp;
  nubo_cost_plan_options o{};
  o.struct_size = sizeof o;
  o.pricings = 1u << NUBO_PRICING_ON_DEMAND;
  o.min_nodes = cpp.min_nodes;
  o.max_nodes = cpp.max_nodes;
  o.limit = cpp.limit;
  o.restart_s = cpp.restart_s;
  o.comm_efficiency = cpp.comm_efficiency;
  return o;
}

cost::Pricing to_pricing(int p, const char* name) {
  if (p < 0 || p > 3)
    throw Error(Errc::invalid_argument,
                std::string(name) + " " + std::to_string(p) + " is not a nubo_cost_pricing (0-3)");
  return static_cast<cost::Pricing>(p);
}

std::unique_ptr<CostPlan> wrap(cost::Plan plan) {
  auto p = std::make_unique<CostPlan>();
  p->plan = std::move(plan);  // before the records, which borrow its strings
  p->ranked = {p->plan.ranked, to_nubo_cost_estimate_info};
  p->frontier = {p->plan.frontier, to_nubo_cost_estimate_info};
  p->exclusions = {p->plan.exclusions(), to_nubo_cost_exclusion_info};
  return p;
}

}  // namespace

cost::Workload to_workload(const nubo_cost_workload* workload) {
  nubo_cost_workload w = read_sized(*require(workload, "workload"), default_workload(), "workload",
                                    "nubo_cost_workload_init()");
  cost::Workload out;
  if (w.profile_path && w.profile_json)
    throw Error(Errc::invalid_argument,
                "workload->profile_path and workload->profile_json are both set: give one");
  // A nubo_dtype the model cannot price (integers) is refused by the model, naming it.
  if (w.dtype < NUBO_DTYPE_F32 || w.dtype > NUBO_DTYPE_TF32)
    throw Error(Errc::invalid_argument,
                "workload->dtype " + std::to_string(w.dtype) + " is not a nubo_dtype (0-5)");
  if (w.profile_path || w.profile_json) {
    auto profile = w.profile_path ? cost::Profile::load(w.profile_path)
                                  : cost::Profile::parse(w.profile_json, "workload->profile_json");
    out = cost::Workload::from_profile(profile, w.epochs);
  } else {
    out.total_flops = w.total_flops;
    out.flops_per_sample = w.flops_per_sample;
    out.samples = w.samples;
    out.epochs = w.epochs;
    out.global_batch = w.global_batch;
    out.dtype = static_cast<DType>(w.dtype);
    out.mfu = w.mfu;
    out.parameters = w.parameters;
    out.tokens = w.tokens;
    out.sequence_length = w.sequence_length;
    out.micro_batch = w.micro_batch;
    if (w.optimizer != NUBO_OPTIMIZER_ADAM && w.optimizer != NUBO_OPTIMIZER_SGD)
      throw Error(Errc::invalid_argument, "workload->optimizer " + std::to_string(w.optimizer) +
                                              " is not a nubo_cost_optimizer (0-1)");
    out.optimizer = static_cast<cost::Optimizer>(w.optimizer);
    out.sharding = w.sharding;
  }
  out.parameter_bytes = w.parameter_bytes;
  out.memory_per_gpu_bytes = w.memory_per_gpu_bytes;
  out.dataset_bytes = w.dataset_bytes;
  out.compression_ratio = w.compression_ratio;
  out.checkpoint_bytes = w.checkpoint_bytes;
  out.checkpoint_write_mbps = w.checkpoint_write_mbps;
  out.checkpoint_interval_s = w.checkpoint_interval_s;
  out.overlap = w.overlap;
  out.egress_bytes = w.egress_bytes;
  out.storage_months_after = w.storage_months_after;
  if (w.tags) {
    std::string tags = w.tags;
    std::size_t start = 0;
    while (start <= tags.size() && !tags.empty()) {
      auto end = tags.find(',', start);
      auto item = tags.substr(start, end == std::string::npos ? std::string::npos : end - start);
      auto eq = item.find('=');
      if (eq == std::string::npos || eq == 0)
        throw Error(Errc::invalid_argument,
                    "workload->tags: '" + item + "' is not KEY=VALUE (e.g. \"team=vision\")");
      out.tags[item.substr(0, eq)] = item.substr(eq + 1);
      if (end == std::string::npos) break;
      start = end + 1;
    }
  }
  return out;
}

cost::PlanRequest to_request(const nubo_cost_plan_options* options, DType dtype) {
  nubo_cost_plan_options o = default_options();
  if (options) o = read_sized(*options, o, "options", "nubo_cost_plan_options_init()");
  cost::PlanRequest r;
  if (o.pricings == 0 || o.pricings > 0xF)
    throw Error(Errc::invalid_argument, "options->pricings " + std::to_string(o.pricings) +
                                            " is not a set of 1 << nubo_cost_pricing bits (1-15)");
  r.pricings.clear();
  for (int p = 0; p < 4; ++p)
    if (o.pricings & (1u << p)) r.pricings.push_back(static_cast<cost::Pricing>(p));
  r.min_nodes = o.min_nodes;
  r.max_nodes = o.max_nodes;
  r.deadline_s = o.deadline_s;
  r.budget = o.budget;
  if (o.gpu) r.gpu = o.gpu;
  if (o.provider) r.provider = o.provider;
  if (o.region) r.region = o.region;
  r.rank = o.rank_by_time ? cost::PlanRequest::Rank::time : cost::PlanRequest::Rank::cost;
  r.limit = o.limit;
  r.spot_mtbi_s = o.spot_mtbi_s;
  r.restart_s = o.restart_s;
  r.comm_efficiency = o.comm_efficiency;
  if (o.preflight_file)
    r.measured = cost::measured_rates(device::PreflightReport::load(o.preflight_file), dtype,
                                      o.preflight_file);
  return r;
}

}  // namespace nubo::capi

extern "C" {

NUBO_C_API nubo_status nubo_cost_workload_init(nubo_cost_workload* workload, size_t struct_size) {
  return nubo::capi::guard("nubo_cost_workload_init", [&] {
    nubo::capi::require(workload, "workload");
    nubo::capi::init_sized(nubo::capi::default_workload(), workload, struct_size,
                           "nubo_cost_workload");
  });
}

NUBO_C_API nubo_status nubo_cost_plan_options_init(nubo_cost_plan_options* options,
                                                   size_t struct_size) {
  return nubo::capi::guard("nubo_cost_plan_options_init", [&] {
    nubo::capi::require(options, "options");
    nubo::capi::init_sized(nubo::capi::default_options(), options, struct_size,
                           "nubo_cost_plan_options");
  });
}

NUBO_C_API nubo_status nubo_cost_plan_create(const nubo_cost_catalog* catalog,
                                             const nubo_cost_workload* workload,
                                             const nubo_cost_plan_options* options,
                                             nubo_cost_plan** out) {
  return nubo::capi::guard("nubo_cost_plan_create", [&] {
    *nubo::capi::require(out, "out") = nullptr;
    const auto& c = nubo::capi::require_catalog(catalog);
    const auto w = nubo::capi::to_workload(workload);
    auto plan = nubo::cost::plan(c.catalog, w, nubo::capi::to_request(options, w.dtype));
    *out = nubo::capi::to_handle(nubo::capi::wrap(std::move(plan)).release());
  });
}

NUBO_C_API nubo_status nubo_cost_estimate(const nubo_cost_catalog* catalog,
                                          const nubo_cost_workload* workload, const char* instance,
                                          const char* region, int nodes, nubo_cost_pricing pricing,
                                          const nubo_cost_plan_options* options,
                                          nubo_cost_plan** out) {
  return nubo::capi::guard("nubo_cost_estimate", [&] {
    *nubo::capi::require(out, "out") = nullptr;
    const auto& c = nubo::capi::require_catalog(catalog);
    const auto& in = c.catalog.get(nubo::capi::require(instance, "instance"), region ? region : "");
    nubo::cost::Plan plan;
    const auto w = nubo::capi::to_workload(workload);
    plan.ranked.push_back(nubo::cost::estimate(c.catalog, w, in, nodes,
                                               nubo::capi::to_pricing(pricing, "pricing"),
                                               nubo::capi::to_request(options, w.dtype)));
    plan.considered = plan.feasible = 1;
    *out = nubo::capi::to_handle(nubo::capi::wrap(std::move(plan)).release());
  });
}

NUBO_C_API void nubo_cost_plan_free(nubo_cost_plan* plan) {
  delete reinterpret_cast<nubo::capi::CostPlan*>(plan);
}

NUBO_C_API nubo_status nubo_cost_plan_counts(const nubo_cost_plan* plan, size_t* considered,
                                             size_t* feasible) {
  return nubo::capi::guard("nubo_cost_plan_counts", [&] {
    const auto& p = nubo::capi::require_plan(plan);
    if (considered) *considered = p.plan.considered;
    if (feasible) *feasible = p.plan.feasible;
  });
}

NUBO_C_API size_t nubo_cost_plan_ranked_count(const nubo_cost_plan* plan) {
  return plan ? nubo::capi::require_plan(plan).ranked.size() : 0;
}

NUBO_C_API size_t nubo_cost_plan_frontier_count(const nubo_cost_plan* plan) {
  return plan ? nubo::capi::require_plan(plan).frontier.size() : 0;
}

NUBO_C_API size_t nubo_cost_plan_exclusion_count(const nubo_cost_plan* plan) {
  return plan ? nubo::capi::require_plan(plan).exclusions.size() : 0;
}

NUBO_C_API nubo_status nubo_cost_plan_ranked(const nubo_cost_plan* plan, size_t index,
                                             nubo_cost_estimate_info* out) {
  return nubo::capi::guard("nubo_cost_plan_ranked", [&] {
    nubo::capi::require_plan(plan).ranked.read(index, out, "the plan", "ranked estimates",
                                               "nubo_cost_estimate_info");
  });
}

NUBO_C_API nubo_status nubo_cost_plan_frontier(const nubo_cost_plan* plan, size_t index,
                                               nubo_cost_estimate_info* out) {
  return nubo::capi::guard("nubo_cost_plan_frontier", [&] {
    nubo::capi::require_plan(plan).frontier.read(index, out, "the plan", "frontier estimates",
                                                 "nubo_cost_estimate_info");
  });
}

NUBO_C_API nubo_status nubo_cost_plan_exclusion(const nubo_cost_plan* plan, size_t index,
                                                nubo_cost_exclusion_info* out) {
  return nubo::capi::guard("nubo_cost_plan_exclusion", [&] {
    nubo::capi::require_plan(plan).exclusions.read(index, out, "the plan", "exclusions",
                                                   "nubo_cost_exclusion_info");
  });
}

NUBO_C_API nubo_status nubo_cost_plan_json(const nubo_cost_plan* plan, char* buf, size_t capacity,
                                           size_t* needed) {
  return nubo::capi::guard("nubo_cost_plan_json", [&] {
    const auto& p = nubo::capi::require_plan(plan);
    nubo::capi::copy_text_out(p.plan.to_json(), "the JSON", buf, capacity, needed);
  });
}

}  // extern "C"
