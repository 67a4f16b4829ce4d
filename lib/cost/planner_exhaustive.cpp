// The exhaustive reference planner: the straightforward way, kept as the yardstick for plan().
// Every (instance, nodes, pricing) is estimated in full and every exclusion is written out; all
// feasible options are sorted; the frontier is one sweep over all of them.
#include <algorithm>
#include <cmath>
#include <limits>

#include "common/text.hpp"
#include "cost/model.hpp"
#include "cost/planner_index.hpp"
#include "nubo/error.hpp"

namespace nubo::cost::detail {

ExhaustivePlan plan_exhaustive(const Catalog& catalog, const Workload& workload,
                               const PlanRequest& request) {
  validate(request);
  const auto model = compile(workload);
  ExhaustivePlan out;
  const std::string gpu_filter = text::lower(request.gpu),
                    provider_filter = text::lower(request.provider);
  std::vector<Estimate> feasible;
  auto exclude = [&](const std::string& option, Why why, std::string reason) {
    out.excluded.emplace_back(option, std::move(reason));
    ++out.excluded_by[static_cast<int>(why)];
  };
  for (const auto& in : catalog.instances()) {
    if (!request.region.empty() && !text::iequals(in.region, request.region)) continue;
    if (!provider_filter.empty() && in.provider != provider_filter) continue;
    const auto& gpu = GpuCatalog::builtin().get(in.gpu_model);
    if (!gpu_model_matches(gpu.model, gpu_filter)) continue;
    for (int nodes = request.min_nodes; nodes <= request.max_nodes; ++nodes) {
      for (auto p : request.pricings) {
        ++out.considered;
        const std::string option = in.name + " (" + in.region + ") x" + std::to_string(nodes) +
                                   " " + std::string(pricing_name(p));
        if (peak_tflops(gpu, model.dtype) <= 0) {
          exclude(option, Why::dtype,
                  gpu.model + " has no " + std::string(dtype_name(model.dtype)));
          continue;
        }
        if (!batch_feeds(model, in.gpus * nodes)) {
          exclude(option, Why::batch, batch_reason(model.global_batch, in.gpus * nodes));
          continue;
        }
        const double capacity = static_cast<double>(gpu.memory_bytes);
        const double need = memory_per_gpu(model.memory, in.gpus * nodes, capacity);
        if (need > capacity) {
          exclude(option, Why::memory, memory_reason(model.memory, gpu, in.gpus * nodes, need));
          continue;
        }
        if (nodes > 1 && in.network_gbps <= 0) {
          exclude(option, Why::no_network, "no network bandwidth, so it cannot span nodes");
          continue;
        }
        if (nodes > 1 && !model.communication_modelled) {
          exclude(option, Why::no_communication,
                  "communication across nodes not modelled: " + communication_needs(model));
          continue;
        }
        if (in.price(p) < 0) {
          exclude(option, Why::no_price, "no " + std::string(pricing_name(p)) + " price");
          continue;
        }
        Estimate e = make_estimate(catalog, workload, model, in, nodes, p, request);
        const double total = e.time.total_s();
        if (swamped_by_interruptions(e.time)) {
          exclude(option, Why::interruptions, interruptions_reason(total));
          continue;
        }
        if (!std::isfinite(total) || (request.deadline_s > 0 && total > request.deadline_s)) {
          exclude(option, Why::deadline,
                  "finishes in " + format_duration(total) + ", past the " +
                      format_duration(request.deadline_s) + " deadline");
          continue;
        }
        if (request.budget > 0 && e.total_cost() > request.budget) {
          exclude(option, Why::budget,
                  "costs " + format_money(e.total_cost()) + ", over the " +
                      format_money(request.budget) + " budget");
          continue;
        }
        feasible.push_back(std::move(e));
      }
    }
  }
  out.feasible = feasible.size();
  const bool by_time = request.rank == PlanRequest::Rank::time;
  auto key = [](const Estimate& e, bool time_first) {
    const double t = e.time.total_s(), c = e.total_cost();
    return OrderKey{time_first ? t : c,         time_first ? c : t, &e.instance, &e.region, e.nodes,
                    static_cast<int>(e.pricing)};
  };
  std::sort(feasible.begin(), feasible.end(), [&](const Estimate& a, const Estimate& b) {
    return key(a, by_time) < key(b, by_time);
  });
  // Pareto: sweep by time; within a group of equal times only the cheapest can survive, and only
  // if it is cheaper than everything faster.
  std::vector<const Estimate*> sorted;
  for (const auto& e : feasible) sorted.push_back(&e);
  std::sort(sorted.begin(), sorted.end(),
            [&](const Estimate* a, const Estimate* b) { return key(*a, true) < key(*b, true); });
  double best = std::numeric_limits<double>::infinity();
  for (std::size_t g = 0; g < sorted.size();) {
    std::size_t end = g;
    while (end < sorted.size() && sorted[end]->time.total_s() == sorted[g]->time.total_s()) ++end;
    const double group_min = sorted[g]->total_cost();
    if (group_min < best) {
      for (std::size_t j = g; j < end && sorted[j]->total_cost() == group_min; ++j)
        out.frontier.push_back(*sorted[j]);
      best = group_min;
    }
    g = end;
  }
  for (auto& f : out.frontier) f.pareto = true;
  for (auto& e : feasible)
    for (const auto& f : out.frontier)
      if (f.instance == e.instance && f.region == e.region && f.nodes == e.nodes &&
          f.pricing == e.pricing)
        e.pareto = true;
  out.ranked = std::move(feasible);
  return out;
}

}  // namespace nubo::cost::detail
