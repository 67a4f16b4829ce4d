// The objects behind the cost handles of nubo_cost.h. Strings handed out in info structs point
// into them, so they live exactly as long as the handle.
#pragma once

#include <string>
#include <vector>

#include "nubo.h"
#include "nubo/cost.hpp"
#include "nubo/error.hpp"
#include "records.hpp"

namespace nubo::capi {

struct CostCatalog {
  nubo::cost::Catalog catalog;
  Records<nubo_cost_instance_info> instances;  // made again after each change (refresh)
  Records<nubo_cost_source_info> sources;
};

struct CostPlan {
  nubo::cost::Plan plan;
  Records<nubo_cost_estimate_info> ranked, frontier;
  Records<nubo_cost_exclusion_info> exclusions;
};

struct CostMeterHandle {
  nubo::cost::CostMeter meter;
};

// The handles stay incomplete types, as nubo_cost.h declares them; only these casts relate them.
inline nubo_cost_catalog* to_handle(CostCatalog* c) {
  return reinterpret_cast<nubo_cost_catalog*>(c);
}
inline const CostCatalog& require_catalog(const nubo_cost_catalog* c) {
  if (!c) throw Error(Errc::invalid_argument, "catalog is NULL");
  return *reinterpret_cast<const CostCatalog*>(c);
}
inline CostCatalog& require_catalog(nubo_cost_catalog* c) {
  if (!c) throw Error(Errc::invalid_argument, "catalog is NULL");
  return *reinterpret_cast<CostCatalog*>(c);
}
inline nubo_cost_plan* to_handle(CostPlan* p) {
  return reinterpret_cast<nubo_cost_plan*>(p);
}
inline const CostPlan& require_plan(const nubo_cost_plan* p) {
  if (!p) throw Error(Errc::invalid_argument, "plan is NULL");
  return *reinterpret_cast<const CostPlan*>(p);
}
inline CostPlan& require_plan(nubo_cost_plan* p) {
  if (!p) throw Error(Errc::invalid_argument, "plan is NULL");
  return *reinterpret_cast<CostPlan*>(p);
}

// A C workload and plan options turned into their C++ forms (cost_plan.cpp).
nubo::cost::Workload to_workload(const nubo_cost_workload* workload);
// `dtype`: the workload's, whose GEMM rate a preflight report's measurements are taken at.
nubo::cost::PlanRequest to_request(const nubo_cost_plan_options* options, DType dtype);
// Makes the C rows of a catalog handle again after it changed.
void refresh(CostCatalog& c);

}  // namespace nubo::capi
