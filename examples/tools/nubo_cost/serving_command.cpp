// nubo-cost plan --inference: the cheapest instances that serve a model at a rate.
#include <iostream>

#include "catalog_load.hpp"
#include "commands.hpp"
#include "flag_values.hpp"
#include "nubo/cost.hpp"
#include "nubo/units.hpp"
#include "text_table.hpp"

namespace nubo_cost {

int run_serving(const PlanCommand& c) {
  using namespace nubo::cost;
  auto catalog = load_catalog(c.catalog);
  InferenceWorkload w;
  if (c.params.empty() && c.model_bytes.empty())
    bad("--inference: give the model's size: --params 7B (or --model-bytes 14G)");
  w.dtype = nubo::parse_dtype(c.dtype);
  w.bytes_per_parameter = c.bytes_per_param;
  w.parameters = !c.params.empty()
                     ? nubo::parse_count(c.params, "--params")
                     : static_cast<double>(nubo::parse_bytes(c.model_bytes, "--model-bytes")) /
                           (c.bytes_per_param > 0 ? c.bytes_per_param
                                                  : static_cast<double>(nubo::dtype_size(w.dtype)));
  if (!c.rate.empty()) w.tokens_per_s = nubo::parse_count(c.rate, "--rate");
  if (!c.requests.empty()) {
    if (c.tokens_per_request.empty()) bad("--requests: give --tokens-per-request too");
    w.requests_per_s = nubo::parse_count(c.requests, "--requests");
    w.tokens_per_request = nubo::parse_count(c.tokens_per_request, "--tokens-per-request");
  }
  if (!c.latency.empty()) w.latency_s = nubo::parse_duration(c.latency, "--latency");
  w.context_tokens = nubo::parse_count(c.context, "--context");
  if (!c.kv_bytes.empty())
    w.kv_bytes_per_token =
        static_cast<double>(nubo::parse_bytes(c.kv_bytes, "--kv-bytes-per-token"));
  PlanRequest r;
  r.pricings = pricings_of(c);
  r.gpu = c.gpu;
  r.provider = c.provider;
  r.region = c.region;
  r.limit = c.limit;
  const auto p = plan_serving(catalog, w, r);
  if (c.json) {
    std::cout << p.to_json() << "\n";
    return p.feasible ? 0 : 3;
  }
  std::cout << "Serve: " << fixed(w.parameters / 1e9, 1) << "B parameters in "
            << dtype_name(w.dtype) << ", "
            << (w.tokens_per_s > 0 || w.requests_per_s > 0
                    ? fixed(w.tokens_per_s > 0 ? w.tokens_per_s
                                               : w.requests_per_s * w.tokens_per_request,
                            0) +
                          " tokens/s"
                    : std::string("one instance's capacity"))
            << (w.latency_s > 0 ? ", at most " + nubo::format_duration(w.latency_s) + " per token"
                                : std::string())
            << ", " << fixed(w.context_tokens, 0) << " tokens of context\n"
            << p.considered << " options: " << p.feasible << " feasible\n\n";
  if (!p.ranked.empty()) {
    TextTable t({"#", "provider", "instance", "region", ">instances", "pricing", "GPUs",
                 ">replica GPUs", ">batch", ">per token", ">tokens/s each", ">$/h", ">$/M tokens"});
    for (std::size_t i = 0; i < p.ranked.size(); ++i) {
      const auto& o = p.ranked[i];
      t.add({std::to_string(i + 1), o.provider, o.instance, o.region, std::to_string(o.instances),
             std::string(pricing_name(o.pricing)),
             std::to_string(o.gpus_per_node) + "x " + o.gpu_model,
             std::to_string(o.gpus_per_replica), fixed(o.batch, 0),
             nubo::format_duration(o.token_latency_s), fixed(o.tokens_per_s, 0),
             format_money(o.hourly), format_money(o.dollars_per_million_tokens)});
    }
    std::cout << t.str();
    for (const auto& n : p.ranked.front().notes) std::cout << "  note: " << n << "\n";
  } else {
    std::cout << "No option serves the request.\n";
  }
  if (!p.exclusions.empty()) {
    std::cout << "\nExcluded:\n";
    const std::size_t show =
        c.explain ? p.exclusions.size() : std::min<std::size_t>(8, p.exclusions.size());
    for (std::size_t i = 0; i < show; ++i)
      std::cout << "  " << p.exclusions[i].subject << ": " << p.exclusions[i].reason << "\n";
    if (show < p.exclusions.size())
      std::cout << "  ... and " << p.exclusions.size() - show
                << " more (--explain lists them all)\n";
  }
  std::cout << "\n" << price_age_text(catalog, c.catalog);
  return p.feasible ? 0 : 3;
}

}  // namespace nubo_cost
