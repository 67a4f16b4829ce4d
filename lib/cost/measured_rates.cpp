// Rates a preflight measured, in the cost model: a GPU found slower than its model should be is
// priced at what it did (nubo-cost plan --preflight check.json).
#include <algorithm>
#include <cstdio>
#include <map>

#include "cost/model.hpp"
#include "nubo/cost.hpp"
#include "nubo/preflight.hpp"

namespace nubo::cost {
namespace {

double median(std::vector<double> v) {
  if (v.empty()) return 1;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace

std::vector<MeasuredRates> measured_rates(const device::PreflightReport& report, DType dtype,
                                          const std::string& source) {
  const std::string gemm = "gemm-" + std::string(dtype_name(dtype));
  std::map<std::string, std::vector<double>> compute, link;
  std::map<int, std::string> model_of;
  for (const auto& d : report.devices)
    if (!d.model.empty()) model_of[d.device] = d.model;
  for (const auto& m : report.measurements) {
    const auto it = model_of.find(m.device);
    if (it == model_of.end() || m.expected <= 0) continue;
    if (m.check == gemm) compute[it->second].push_back(m.ratio);
    if (m.check == "peer-to-peer") link[it->second].push_back(m.ratio);
  }
  std::vector<MeasuredRates> out;
  for (const auto& [model, ratios] : compute) {
    MeasuredRates r;
    r.gpu_model = model;
    r.compute = std::clamp(median(ratios), 0.01, 1.0);
    r.link = std::clamp(median(link[model]), 0.01, 1.0);
    r.source = source;
    out.push_back(r);
  }
  return out;
}

namespace detail {

std::string apply_measured(Hardware& h, const std::vector<MeasuredRates>& measured) {
  for (const auto& m : measured) {
    if (!h.gpu || m.gpu_model != h.gpu->model) continue;
    h.compute_scale = m.compute;
    h.link_Bps *= m.link;
    char note[256];
    std::snprintf(note, sizeof note,
                  "%s rates as the preflight measured them (%s): compute %.2f, GPU links %.2f of "
                  "the table's",
                  m.gpu_model.c_str(), m.source.c_str(), m.compute, m.link);
    return note;
  }
  return "";
}

}  // namespace detail
}  // namespace nubo::cost
