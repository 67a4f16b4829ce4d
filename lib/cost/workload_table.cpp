#include "cost/workload_table.hpp"

#include <array>
#include <cmath>
#include <cstdio>
#include <string>

#include "nubo/error.hpp"

namespace nubo::cost::detail {
namespace {

constexpr double kBig = 1e30;
using W = Workload;
using T = FieldText;

// In the order nubo-cost plan's help lists them. Ranges: what a run can be, generously.
const std::array<WorkloadField, 20> kFields{{
    {"params", "parameters", &W::parameters, T::count, 1, 1e16, true, true, ""},
    {"tokens", "tokens", &W::tokens, T::count, 1, 1e20, true, true, ""},
    {"seq-len", "sequence_length", &W::sequence_length, T::number, 1, 1e9, true, true, "tokens"},
    {"micro-batch", "micro_batch", &W::micro_batch, T::number, 1, 1e6, false, true, "samples"},
    {"flops", "total_flops", &W::total_flops, T::number, 1, 1e40, true, true, "FLOP"},
    {"flops-per-sample", "flops_per_sample", &W::flops_per_sample, T::number, 1e-9, 1e30, true,
     true, "FLOP"},
    {"mfu", "mfu", &W::mfu, T::number, 0, 1, false, true, ""},
    {"samples", "samples", &W::samples, T::number, 0, 1e18, false, false, ""},
    {"epochs", "epochs", &W::epochs, T::number, 1e-9, 1e9, false, false, ""},
    {"batch", "global_batch", &W::global_batch, T::number, 0, 1e12, false, false, "samples"},
    {"params-bytes", "parameter_bytes", &W::parameter_bytes, T::bytes, 0, kBig, false, false,
     "bytes"},
    {"gpu-memory", "memory_per_gpu_bytes", &W::memory_per_gpu_bytes, T::bytes, 0, kBig, false,
     false, "bytes"},
    {"dataset", "dataset_bytes", &W::dataset_bytes, T::bytes, 0, kBig, false, false, "bytes"},
    {"compression", "compression_ratio", &W::compression_ratio, T::number, 1e-6, 1, false, false,
     ""},
    {"checkpoint-size", "checkpoint_bytes", &W::checkpoint_bytes, T::bytes, 0, kBig, false, false,
     "bytes"},
    {"checkpoint-every", "checkpoint_interval_s", &W::checkpoint_interval_s, T::duration, 0, 1e12,
     false, false, "s"},
    {"", "checkpoint_write_mbps", &W::checkpoint_write_mbps, T::number, 0, 1e9, false, false,
     "MB/s"},
    {"overlap", "overlap", &W::overlap, T::number, -1, 1, false, false, ""},
    {"egress", "egress_bytes", &W::egress_bytes, T::bytes, 0, kBig, false, false, "bytes"},
    {"keep-months", "storage_months_after", &W::storage_months_after, T::number, 0, 1200, false,
     false, "months"},
}};

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

}  // namespace

std::span<const WorkloadField> workload_field_table() {
  return kFields;
}

const WorkloadField* find_workload_field(std::string_view flag) noexcept {
  for (const auto& f : workload_field_table())
    if (!f.flag.empty() && f.flag == flag) return &f;
  return nullptr;
}

void check_workload_field(const WorkloadField& f, double v, std::string_view what, bool given) {
  if (f.zero_unset && v == 0 && !given) return;
  if (std::isfinite(v) && v >= f.min && v <= f.max) return;
  throw Error(Errc::invalid_argument, std::string(what) + ": " + std::string(f.member) + " is " +
                                          num(v) + "; it must lie in [" + num(f.min) + ", " +
                                          num(f.max) + "]" + (f.unit.empty() ? "" : " ") +
                                          std::string(f.unit));
}

}  // namespace nubo::cost::detail
