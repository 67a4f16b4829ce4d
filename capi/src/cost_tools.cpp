// The cost tools through the C ABI: Young/Daly checkpoints, rent or own, the live meter.
#include <memory>
#include <type_traits>

#include "cost_handles.hpp"
#include "generated/options.hpp"
#include "generated/results.hpp"
#include "guard.hpp"
#include "nubo.h"
#include "sized_struct.hpp"
#include "text_out.hpp"

namespace {

// The handle behind a meter, const when the meter is.
template <class Meter>
auto& require_meter(Meter* m) {
  if (!m) throw nubo::Error(nubo::Errc::invalid_argument, "meter is NULL");
  using Handle = std::conditional_t<std::is_const_v<Meter>, const nubo::capi::CostMeterHandle,
                                    nubo::capi::CostMeterHandle>;
  return *reinterpret_cast<Handle*>(m);
}

}  // namespace

extern "C" {

NUBO_C_API nubo_status nubo_cost_checkpoint_plan(double work_s, double write_s, double mtbi_s,
                                                 double restart_s, nubo_cost_checkpoint_info* out) {
  return nubo::capi::guard("nubo_cost_checkpoint_plan", [&] {
    nubo::capi::require(out, "out");
    nubo::capi::write_sized(nubo::capi::to_nubo_cost_checkpoint_info(
                                nubo::cost::checkpoint_plan(work_s, write_s, mtbi_s, restart_s)),
                            out, "out", "nubo_cost_checkpoint_info");
  });
}

NUBO_C_API nubo_status nubo_cost_own_request_init(nubo_cost_own_request* request,
                                                  size_t struct_size) {
  return nubo::capi::guard("nubo_cost_own_request_init", [&] {
    nubo::capi::require(request, "request");
    nubo::capi::init_options(request, struct_size);
  });
}

NUBO_C_API nubo_status nubo_cost_rent_vs_own(const nubo_cost_own_request* request,
                                             nubo_cost_own_info* out) {
  return nubo::capi::guard("nubo_cost_rent_vs_own", [&] {
    const auto cpp = nubo::capi::read_options(nubo::capi::require(request, "request"), "request");
    nubo::capi::require(out, "out");
    nubo::capi::write_sized(nubo::capi::to_nubo_cost_own_info(nubo::cost::rent_vs_own(cpp)), out,
                            "out", "nubo_cost_own_info");
  });
}

NUBO_C_API nubo_status nubo_cost_meter_create(double hourly, double fixed, nubo_cost_meter** out) {
  return nubo::capi::guard("nubo_cost_meter_create", [&] {
    *nubo::capi::require(out, "out") = nullptr;
    auto m = std::make_unique<nubo::capi::CostMeterHandle>(
        nubo::capi::CostMeterHandle{nubo::cost::CostMeter(hourly, fixed)});
    *out = reinterpret_cast<nubo_cost_meter*>(m.release());
  });
}

NUBO_C_API nubo_status nubo_cost_meter_for_instance(const nubo_cost_catalog* catalog,
                                                    const char* instance, nubo_cost_pricing pricing,
                                                    int nodes, nubo_cost_meter** out) {
  return nubo::capi::guard("nubo_cost_meter_for_instance", [&] {
    *nubo::capi::require(out, "out") = nullptr;
    const auto& c = nubo::capi::require_catalog(catalog);
    if (pricing < NUBO_PRICING_ON_DEMAND || pricing > NUBO_PRICING_RESERVED_3Y)
      throw nubo::Error(nubo::Errc::invalid_argument,
                        "pricing " + std::to_string(pricing) + " is not a nubo_cost_pricing (0-3)");
    auto m = std::make_unique<nubo::capi::CostMeterHandle>(nubo::capi::CostMeterHandle{
        nubo::cost::CostMeter::for_instance(c.catalog, nubo::capi::require(instance, "instance"),
                                            static_cast<nubo::cost::Pricing>(pricing), nodes)});
    *out = reinterpret_cast<nubo_cost_meter*>(m.release());
  });
}

NUBO_C_API nubo_status nubo_cost_meter_update(nubo_cost_meter* meter, double elapsed_s,
                                              double progress, double* spent, double* projected) {
  return nubo::capi::guard("nubo_cost_meter_update", [&] {
    auto& m = require_meter(meter).meter;
    m.update(elapsed_s, progress);
    if (spent) *spent = m.spent();
    if (projected) *projected = m.projected();
  });
}

NUBO_C_API nubo_status nubo_cost_meter_line(const nubo_cost_meter* meter, char* buf,
                                            size_t capacity, size_t* needed) {
  return nubo::capi::guard("nubo_cost_meter_line", [&] {
    const auto& m = require_meter(meter).meter;
    nubo::capi::copy_text_out(m.line(), "the line", buf, capacity, needed);
  });
}

NUBO_C_API nubo_status nubo_cost_meter_price(const nubo_cost_meter* meter,
                                             nubo_cost_meter_info* out) {
  return nubo::capi::guard("nubo_cost_meter_price", [&] {
    const auto& m = require_meter(meter).meter;
    nubo::capi::require(out, "out");
    nubo_cost_meter_info info{};
    info.hourly = m.hourly();
    info.price_date = m.price_date().c_str();
    info.price_source = m.price_source().c_str();
    nubo::capi::write_sized(info, out, "out", "nubo_cost_meter_info");
  });
}

NUBO_C_API void nubo_cost_meter_free(nubo_cost_meter* meter) {
  delete reinterpret_cast<nubo::capi::CostMeterHandle*>(meter);
}

}  // extern "C"
