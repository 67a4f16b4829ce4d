// Serving: the cheapest instances that generate tokens at a target rate within a latency limit.
//
// A decode step reads every weight once and the KV cache of every sequence in the batch, and
// does 2 N FLOPs per sequence; it takes the longer of the two (memory at the achieved fraction
// of peak bandwidth, compute at half the peak). A replica holds one copy of the weights over
// g GPUs of one instance (tensor parallel, g = 1, 2, 4 or 8, the fewest that hold the weights
// with room for KV cache). Its batch is the most sequences whose KV cache fits and whose step
// meets the latency limit; its rate is batch / step. docs/cost.md, "Serving", states it.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <tuple>

#include <nlohmann/json.hpp>

#include "common/text.hpp"
#include "cost/model.hpp"
#include "nubo/cost.hpp"
#include "nubo/error.hpp"
#include "nubo/units.hpp"

namespace nubo::cost {
namespace {

constexpr double kUsableMemory = 0.9;  // the rest: activations, fragmentation, the runtime
constexpr double kComputeFraction = 0.5;
constexpr double kMaxBatch = 1024;

void check(double v, const char* name, double min, double max) {
  detail::check_range(v, "inference workload", name, min, max);
}

struct Model {
  double weights = 0, kv_per_sequence = 0, rate = 0, latency = 0, flops_per_token = 0;
  DType dtype = DType::bf16;
};

Model model_of(const InferenceWorkload& w) {
  check(w.parameters, "parameters", 1, 1e16);
  check(w.bytes_per_parameter, "bytes_per_parameter", 0, 8);
  check(w.tokens_per_s, "tokens_per_s", 0, 1e12);
  check(w.requests_per_s, "requests_per_s", 0, 1e9);
  check(w.tokens_per_request, "tokens_per_request", 0, 1e9);
  check(w.context_tokens, "context_tokens", 1, 1e8);
  check(w.latency_s, "latency_s", 0, 1e4);
  check(w.kv_bytes_per_token, "kv_bytes_per_token", 0, 1e9);
  check(w.memory_efficiency, "memory_efficiency", 0.01, 1);
  if (w.dtype != DType::f16 && w.dtype != DType::bf16 && w.dtype != DType::f32)
    throw Error(Errc::invalid_argument, "inference workload: dtype must be f16, bf16 or f32");
  Model m;
  m.dtype = w.dtype;
  const double bytes = static_cast<double>(dtype_size(w.dtype));
  m.weights = w.parameters * (w.bytes_per_parameter > 0 ? w.bytes_per_parameter : bytes);
  // K and V of every layer for each token, for a dense transformer of this size; models with
  // grouped-query attention keep less: give theirs.
  const auto shape = detail::dense_shape(w.parameters);
  const double kv =
      w.kv_bytes_per_token > 0 ? w.kv_bytes_per_token : 2 * shape.layers * shape.hidden * bytes;
  m.kv_per_sequence = kv * w.context_tokens;
  m.rate = w.tokens_per_s > 0 ? w.tokens_per_s : w.requests_per_s * w.tokens_per_request;
  m.latency = w.latency_s;
  m.flops_per_token = 2 * w.parameters;
  return m;
}

struct Replica {
  int gpus = 0;
  double batch = 0, step_s = 0, rate = 0;
  std::string why_not;  // when no batch works
};

// The best replica of up to `gpus` GPUs of this model (rate per instance, all replicas).
Replica best_replica(const Model& m, const nubo::detail::GpuModel& gpu, int gpus,
                     double efficiency) {
  Replica best;
  const double peak = detail::peak_tflops(gpu, m.dtype) * 1e12 * kComputeFraction;
  if (peak <= 0) {
    best.why_not =
        gpu.model + " has no " + std::string(dtype_name(m.dtype)) + " support (--dtype f16 or f32)";
    return best;
  }
  for (int g = 1; g <= gpus; g *= 2) {
    if (gpus % g) continue;
    const double memory = g * static_cast<double>(gpu.memory_bytes) * kUsableMemory;
    const double bandwidth = g * gpu.memory_gbs * 1e9 * efficiency;
    if (m.weights >= memory) {
      best.why_not = "its weights (" + format_bytes(m.weights) + ") do not fit " +
                     std::to_string(gpus) + "x " + gpu.model;
      continue;
    }
    double batch = std::min(kMaxBatch, std::floor((memory - m.weights) / m.kv_per_sequence));
    auto step = [&](double b) {
      return std::max((m.weights + b * m.kv_per_sequence) / bandwidth,
                      m.flops_per_token * b / (g * peak));
    };
    if (m.latency > 0) {
      // The largest batch whose step meets the limit (the step grows with the batch).
      double lo = 0, hi = batch;
      while (lo < hi) {
        const double mid = std::floor((lo + hi + 1) / 2);
        if (step(mid) <= m.latency)
          lo = mid;
        else
          hi = mid - 1;
      }
      batch = lo;
    }
    if (batch < 1) {
      char buf[160];
      std::snprintf(buf, sizeof buf, "one sequence takes %s per token on %dx %s, over the %s limit",
                    format_duration(step(1)).c_str(), g, gpu.model.c_str(),
                    format_duration(m.latency).c_str());
      best.why_not = buf;
      if (m.weights < memory && m.kv_per_sequence > memory - m.weights)
        best.why_not = "one sequence's KV cache does not fit beside the weights on " +
                       std::to_string(g) + "x " + gpu.model;
      continue;
    }
    const double rate = (gpus / g) * batch / step(batch);
    if (rate > best.rate) best = {g, batch, step(batch), rate, {}};
  }
  return best;
}

}  // namespace

std::string ServingOption::label() const {
  return instance + " x" + std::to_string(instances) + " " + std::string(pricing_name(pricing));
}

ServingPlan plan_serving(const Catalog& catalog, const InferenceWorkload& workload,
                         const PlanRequest& request) {
  detail::validate(request);
  const Model m = model_of(workload);
  ServingPlan out;
  // One exclusion line per instance type, pricing and reason: regions share them.
  std::map<std::tuple<std::string, std::string, std::string>, std::size_t> excluded;
  auto exclude = [&](const Instance& in, Pricing p, const std::string& why) {
    auto key = std::tuple{in.name, std::string(pricing_name(p)), why};
    auto [it, fresh] = excluded.emplace(key, out.exclusions.size());
    if (fresh)
      out.exclusions.push_back({in.name + " (" + std::string(pricing_name(p)) + ")", why, 0});
    ++out.exclusions[it->second].options;
  };
  const auto provider_filter = text::lower(request.provider);
  for (const auto& in : catalog.instances()) {
    if (!gpu_model_matches(in.gpu_model, request.gpu)) continue;
    if (!provider_filter.empty() && in.provider != provider_filter) continue;
    if (!request.region.empty() && !text::iequals(in.region, request.region)) continue;
    const auto& gpu = nubo::detail::GpuCatalog::builtin().get(in.gpu_model);
    const Replica r = best_replica(m, gpu, in.gpus, workload.memory_efficiency);
    for (auto p : request.pricings) {
      ++out.considered;
      if (r.rate <= 0) {
        exclude(in, p, r.why_not);
        continue;
      }
      const double price = in.price(p);
      if (price < 0) {
        exclude(in, p, "the catalog has no " + std::string(pricing_name(p)) + " price for it");
        continue;
      }
      ServingOption o;
      o.provider = in.provider;
      o.instance = in.name;
      o.region = in.region;
      o.gpu_model = in.gpu_model;
      o.gpus_per_node = in.gpus;
      o.pricing = p;
      o.gpus_per_replica = r.gpus;
      o.replicas_per_instance = in.gpus / r.gpus;
      o.batch = r.batch;
      o.token_latency_s = r.step_s;
      o.tokens_per_s = r.rate;
      o.instances = m.rate > 0 ? static_cast<int>(std::ceil(m.rate / r.rate)) : 1;
      o.hourly = o.instances * price;
      const double delivered = m.rate > 0 ? m.rate : r.rate;
      o.dollars_per_million_tokens = o.hourly / (delivered * 3600) * 1e6;
      o.price_date = p == Pricing::spot && !in.spot_date.empty() ? in.spot_date : in.price_date;
      o.price_source = in.source;
      if (workload.kv_bytes_per_token <= 0)
        o.notes.push_back(
            "KV cache estimated for a dense transformer with full attention; models with "
            "grouped-query attention keep less (--kv-bytes-per-token)");
      if (p == Pricing::spot)
        o.notes.push_back("spot: an interruption drops the requests in flight on that instance");
      out.ranked.push_back(std::move(o));
    }
  }
  out.feasible = out.ranked.size();
  std::sort(out.ranked.begin(), out.ranked.end(),
            [](const ServingOption& a, const ServingOption& b) {
              return std::tie(a.hourly, a.instance, a.region, a.pricing) <
                     std::tie(b.hourly, b.instance, b.region, b.pricing);
            });
  if (request.limit > 0 && out.ranked.size() > request.limit) out.ranked.resize(request.limit);
  return out;
}

std::string ServingPlan::to_json() const {
  nlohmann::json ranked_j = nlohmann::json::array(), excl = nlohmann::json::array();
  for (const auto& o : ranked)
    ranked_j.push_back({{"label", o.label()},
                        {"provider", o.provider},
                        {"instance", o.instance},
                        {"region", o.region},
                        {"gpu_model", o.gpu_model},
                        {"gpus_per_node", o.gpus_per_node},
                        {"instances", o.instances},
                        {"pricing", pricing_name(o.pricing)},
                        {"gpus_per_replica", o.gpus_per_replica},
                        {"replicas_per_instance", o.replicas_per_instance},
                        {"batch", o.batch},
                        {"token_latency_s", o.token_latency_s},
                        {"tokens_per_s", o.tokens_per_s},
                        {"hourly", o.hourly},
                        {"dollars_per_million_tokens", o.dollars_per_million_tokens},
                        {"price_date", o.price_date},
                        {"price_source", o.price_source},
                        {"notes", o.notes}});
  for (const auto& x : exclusions)
    excl.push_back({{"subject", x.subject}, {"reason", x.reason}, {"options", x.options}});
  return nlohmann::json{{"considered", considered},
                        {"feasible", feasible},
                        {"ranked", ranked_j},
                        {"exclusions", excl}}
      .dump(2);
}

}  // namespace nubo::cost
