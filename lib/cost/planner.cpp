// The planner: every instance x node count x pricing, filtered by GPU support, memory, deadline
// and budget, ranked by cost or time, with the Pareto frontier marked and every exclusion kept.
//
// It works per shape (planner_index.hpp): the time model runs once per shape, node count and
// pricing; the budget cuts a price-sorted list by binary search; ranking merges the shapes'
// sorted lists with a heap; the frontier is found among each shape's cheapest options (a dearer
// option of the same shape takes as long, so it is always dominated). Only the plans returned are
// estimated in full. plan_exhaustive() does the same the slow way, and the tests check that both
// agree.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <queue>
#include <set>
#include <tuple>

#include "common/text.hpp"
#include "cost/model.hpp"
#include "cost/planner_index.hpp"
#include "nubo/cost.hpp"
#include "nubo/error.hpp"

namespace nubo::cost {
namespace {

using detail::ExclusionRecord;
using detail::OrderKey;
using detail::Why;

struct Candidate {
  std::uint32_t shape;
  int nodes;
  Pricing pricing;
  double total_s, fixed;
  std::size_t feasible;  // a prefix of the shape's price-sorted rows
};

std::uint8_t bit(Pricing p) {
  return static_cast<std::uint8_t>(1u << static_cast<int>(p));
}

}  // namespace

Plan plan(const Catalog& catalog, const Workload& workload, const PlanRequest& request) {
  detail::validate(request);
  const auto model = detail::compile(workload);
  const auto& instances = catalog.instances();
  if (instances.empty())
    throw Error(Errc::invalid_argument,
                "the catalog has no instances to plan with: Catalog::builtin() (or Catalog()) "
                "holds the embedded ones, and load_file() adds yours");
  auto index = detail::CostAccess::compiled(catalog);
  if (!request.region.empty() || !index) {
    std::vector<std::uint32_t> rows;
    for (std::uint32_t i = 0; i < instances.size(); ++i)
      if (request.region.empty() || text::iequals(instances[i].region, request.region))
        rows.push_back(i);
    index = detail::compile_catalog(catalog, rows);
  }
  auto data = std::make_shared<detail::PlanData>();
  data->index = index;
  data->pricings = request.pricings;
  data->dtype = model.dtype;
  data->memory = model.memory;
  data->deadline_s = request.deadline_s;
  data->global_batch = model.global_batch;
  data->communication_needs = detail::communication_needs(model);
  data->budget = request.budget;
  data->catalog_sources = catalog.sources();
  auto& records = data->records;

  Plan out;
  std::uint8_t all = 0;
  for (auto p : request.pricings) all |= bit(p);
  const std::size_t P = request.pricings.size();
  const std::string gpu_filter = text::lower(request.gpu),
                    provider_filter = text::lower(request.provider);
  std::vector<Candidate> candidates;

  for (std::uint32_t si = 0; si < index->shapes.size(); ++si) {
    const auto& sh = index->shapes[si];
    if (!gpu_model_matches(sh.gpu->model, gpu_filter)) continue;
    if (!provider_filter.empty() && sh.provider != provider_filter) continue;
    const std::size_t rows = sh.rows.size();
    const int lo = request.min_nodes, hi = request.max_nodes;
    const std::size_t per_node = rows * P;
    out.considered += per_node * static_cast<std::size_t>(hi - lo + 1);
    auto record = [&](int n_lo, int n_hi, std::uint8_t mask, Why why, double value,
                      std::size_t options) {
      records.push_back({si, n_lo, n_hi, mask, why, value, options});
    };
    if (detail::peak_tflops(*sh.gpu, model.dtype) <= 0) {
      record(lo, hi, all, Why::dtype, 0, per_node * static_cast<std::size_t>(hi - lo + 1));
      continue;
    }
    const ProviderPrices& provider = catalog.providers().at(sh.provider_index);
    detail::Hardware h{sh.gpu, sh.gpus, sh.link_gbs * 1e9, sh.network_gbps * 1e9 / 8, &provider};
    detail::apply_measured(h, request.measured);
    const double mtbi = detail::spot_mtbi_s(request, provider, sh.spot_mtbi_h);
    const double restart = detail::spot_restart_s(request, provider);
    const double egress = egress_cost(provider, model.egress_bytes);
    std::array<int, detail::kPricings> no_price_record{-1, -1, -1, -1};
    int memory_record = -1;
    const double capacity = static_cast<double>(sh.gpu->memory_bytes);
    for (int nodes = lo; nodes <= hi; ++nodes) {
      if (!detail::batch_feeds(model, sh.gpus * nodes)) {
        record(nodes, hi, all, Why::batch, sh.gpus * nodes,
               per_node * static_cast<std::size_t>(hi - nodes + 1));
        break;
      }
      // Memory per GPU may fall with more GPUs to partition over (ZeRO).
      const double need = detail::memory_per_gpu(model.memory, sh.gpus * nodes, capacity);
      if (need > capacity) {
        if (memory_record >= 0 && records[memory_record].nodes_hi == nodes - 1) {
          records[memory_record].nodes_hi = nodes;
          records[memory_record].options += per_node;
        } else {
          memory_record = static_cast<int>(records.size());
          record(nodes, nodes, all, Why::memory, need, per_node);
        }
        continue;
      }
      if (nodes > 1 && h.network_Bps <= 0) {
        record(nodes, hi, all, Why::no_network, 0,
               per_node * static_cast<std::size_t>(hi - nodes + 1));
        break;
      }
      // Nodes are worth more than one only for their speed, which rests on communication.
      if (nodes > 1 && !model.communication_modelled) {
        record(nodes, hi, all, Why::no_communication, 0,
               per_node * static_cast<std::size_t>(hi - nodes + 1));
        break;
      }
      const auto rt = detail::run_time(model, h, nodes, request.comm_efficiency);
      for (auto p : request.pricings) {
        const int pi = static_cast<int>(p);
        const auto& prices = sh.prices[pi];
        const std::size_t priced = prices.size();
        if (priced < rows) {
          // One record per shape and pricing, its node range growing with the loop.
          auto& r = no_price_record[pi];
          if (r >= 0 && records[r].nodes_hi == nodes - 1) {
            records[r].nodes_hi = nodes;
            records[r].options += rows - priced;
          } else {
            r = static_cast<int>(records.size());
            record(nodes, nodes, bit(p), Why::no_price, 0, rows - priced);
          }
        }
        if (priced == 0) continue;
        const auto t = detail::timing(model, h, rt, p, mtbi, restart, nodes);
        const double total = t.time.total_s();
        if (detail::swamped_by_interruptions(t.time)) {
          record(nodes, nodes, bit(p), Why::interruptions, total, priced);
          continue;
        }
        if (!std::isfinite(total) || (request.deadline_s > 0 && total > request.deadline_s)) {
          record(nodes, nodes, bit(p), Why::deadline, total, priced);
          continue;
        }
        const double fixed = detail::storage_cost(model, provider, total, nodes) + egress;
        std::size_t k = priced;
        if (request.budget > 0) {
          auto cut = std::partition_point(prices.begin(), prices.end(), [&](double price) {
            return detail::option_cost(total, nodes, price, fixed) <= request.budget;
          });
          k = static_cast<std::size_t>(cut - prices.begin());
          if (k < priced)
            record(nodes, nodes, bit(p), Why::budget,
                   detail::option_cost(total, nodes, prices[k], fixed), priced - k);
        }
        if (k == 0) continue;
        candidates.push_back({si, nodes, p, total, fixed, k});
        out.feasible += k;
      }
    }
  }

  auto row_of = [&](const Candidate& c, std::size_t i) {
    return index->shapes[c.shape].order[static_cast<int>(c.pricing)][i];
  };
  auto cost_of = [&](const Candidate& c, std::size_t i) {
    return detail::option_cost(
        c.total_s, c.nodes, index->shapes[c.shape].prices[static_cast<int>(c.pricing)][i], c.fixed);
  };
  auto key_of = [&](const Candidate& c, std::size_t i, bool by_time) {
    const Instance& in = instances[row_of(c, i)];
    const double cost = cost_of(c, i);
    return OrderKey{
        by_time ? c.total_s : cost, by_time ? cost : c.total_s, &in.name, &in.region, c.nodes,
        static_cast<int>(c.pricing)};
  };

  // The frontier: each candidate's cheapest options (all those at its lowest price), kept unless
  // a faster-or-as-fast option costs less.
  std::vector<std::size_t> by_time(candidates.size());
  for (std::size_t i = 0; i < by_time.size(); ++i) by_time[i] = i;
  std::sort(by_time.begin(), by_time.end(), [&](std::size_t a, std::size_t b) {
    return key_of(candidates[a], 0, true) < key_of(candidates[b], 0, true);
  });
  std::set<std::tuple<std::uint32_t, int, int>> on_frontier;  // (row, nodes, pricing)
  std::vector<std::pair<std::size_t, std::size_t>> frontier;  // (candidate, position)
  double best_before = std::numeric_limits<double>::infinity();
  for (std::size_t g = 0; g < by_time.size();) {
    // A group of candidates with the same time; its cheapest cost is the first one's.
    const double t = candidates[by_time[g]].total_s;
    const double group_min = cost_of(candidates[by_time[g]], 0);
    std::size_t end = g;
    while (end < by_time.size() && candidates[by_time[end]].total_s == t) ++end;
    if (group_min < best_before) {
      for (std::size_t j = g; j < end; ++j) {
        const auto& c = candidates[by_time[j]];
        if (cost_of(c, 0) != group_min) break;
        const auto& prices = index->shapes[c.shape].prices[static_cast<int>(c.pricing)];
        for (std::size_t i = 0; i < c.feasible && prices[i] == prices[0]; ++i) {
          frontier.emplace_back(by_time[j], i);
          on_frontier.emplace(row_of(c, i), c.nodes, static_cast<int>(c.pricing));
        }
      }
      best_before = group_min;
    }
    g = end;
  }
  std::sort(frontier.begin(), frontier.end(), [&](const auto& a, const auto& b) {
    return key_of(candidates[a.first], a.second, true) <
           key_of(candidates[b.first], b.second, true);
  });

  // The ranked plans: a k-way merge of the candidates' sorted lists.
  const bool rank_time = request.rank == PlanRequest::Rank::time;
  struct Head {
    OrderKey key;
    std::size_t cand, pos;
  };
  auto later = [](const Head& a, const Head& b) { return b.key < a.key; };
  std::priority_queue<Head, std::vector<Head>, decltype(later)> heap(later);
  for (std::size_t c = 0; c < candidates.size(); ++c)
    heap.push({key_of(candidates[c], 0, rank_time), c, 0});
  const std::size_t want =
      request.limit == 0 ? out.feasible : std::min(request.limit, out.feasible);
  auto materialise = [&](std::size_t c, std::size_t pos) {
    const auto& cand = candidates[c];
    auto e = detail::make_estimate(catalog, workload, model, instances[row_of(cand, pos)],
                                   cand.nodes, cand.pricing, request);
    e.pareto =
        on_frontier.count({row_of(cand, pos), cand.nodes, static_cast<int>(cand.pricing)}) > 0;
    return e;
  };
  while (out.ranked.size() < want && !heap.empty()) {
    Head h = heap.top();
    heap.pop();
    out.ranked.push_back(materialise(h.cand, h.pos));
    if (h.pos + 1 < candidates[h.cand].feasible)
      heap.push({key_of(candidates[h.cand], h.pos + 1, rank_time), h.cand, h.pos + 1});
  }
  for (auto [c, pos] : frontier) out.frontier.push_back(materialise(c, pos));
  detail::CostAccess::set_data(out, std::move(data));
  return out;
}

}  // namespace nubo::cost
