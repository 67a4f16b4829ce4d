// The data checks every imported row passes, whatever its source, so that no planner answer
// rests on a broken row: prices of zero or implausible for the GPU, spot or reserved above
// on-demand. Each returns "" or the reason the row is skipped.
#pragma once

#include <string>
#include <string_view>

#include "cost/sources/source.hpp"
#include "device/backend/gpu_catalog.hpp"

namespace nubo::cost::sources {

// A price for `gpus` GPUs of `model` on a host of `vcpus` ($/h for the instance), checked against
// the plausible band of that model's price per GPU-hour (price_bands.csv). The band's top admits
// the host's CPUs as well, at up to kMaxVcpuHour each: one small GPU on a large host (a T4 with 64
// vCPUs) is priced mostly for its CPUs. `what` names it: "on-demand", "spot".
constexpr double kMaxVcpuHour = 0.10;  // about twice the dearest on-demand vCPU-hour listed
std::string check_price(const nubo::detail::GpuModel& model, double gpus, double vcpus,
                        double price, const char* what);
// Spot, reserved: never above on-demand.
std::string check_below_on_demand(double price, double on_demand, const char* what);

// "" when `value` is one line of printable UTF-8 of at most 256 bytes, else why not (naming
// `what`): the check of every name a catalog row brings.
std::string check_text(std::string_view value, const char* what);
// The names a row carries (its provider, instance, region, accelerator, band): "" when each is
// one line of printable UTF-8 of at most 256 bytes, else why not. A catalog's names reach
// terminals, job files and URLs: none may hold a control character or a line break.
std::string check_names(const Instance& in);
// Rows whose names fail check_names move to `skipped`, and every skipped row's place and reason
// become printable: what every source's rows pass before an update or a catalog keeps them.
void check_rows(Imported& got);

}  // namespace nubo::cost::sources
