// What a plan says: its exclusions in words, and the whole plan as JSON (docs/cost.md).
#include <cstdio>

#include <nlohmann/json.hpp>

#include "cost/estimate_json.hpp"
#include "cost/planner_index.hpp"
#include "nubo/cost.hpp"

namespace nubo::cost {
namespace {

std::string nodes_text(int lo, int hi) {
  return lo == hi ? "x" + std::to_string(lo) : "x" + std::to_string(lo) + "-" + std::to_string(hi);
}

std::string pricings_text(std::uint8_t mask, const std::vector<Pricing>& order) {
  std::string out;
  for (auto p : order)
    if (mask & (1u << static_cast<int>(p)))
      out += (out.empty() ? "" : ", ") + std::string(pricing_name(p));
  return out;
}

Exclusion format(const detail::PlanData& d, const detail::ExclusionRecord& r) {
  const auto& sh = d.index->shapes[r.shape];
  Exclusion e;
  e.options = r.options;
  e.subject = sh.subject + " " + nodes_text(r.nodes_lo, r.nodes_hi) + " (" +
              pricings_text(r.pricings, d.pricings) + ")";
  switch (r.why) {
    case detail::Why::dtype:
      e.reason = sh.gpu->model + " has no " + std::string(dtype_name(d.dtype)) +
                 " support (its peak is 0 in the GPU table)";
      break;
    case detail::Why::memory:
      e.reason = detail::memory_reason(d.memory, *sh.gpu, sh.gpus * r.nodes_lo, r.value);
      break;
    case detail::Why::no_network:
      e.reason = "the catalog gives it no network bandwidth, so it cannot span nodes";
      break;
    case detail::Why::no_communication:
      e.reason =
          "more nodes pay only through their speed, and communication between them is not "
          "modelled: " +
          d.communication_needs;
      break;
    case detail::Why::no_price:
      e.reason =
          "the catalog has no " + pricings_text(r.pricings, d.pricings) + " price for " +
          (r.options == sh.rows.size() * static_cast<std::size_t>(r.nodes_hi - r.nodes_lo + 1)
               ? "it"
               : "some of its regions");
      break;
    case detail::Why::deadline:
      e.reason = "finishes in " + format_duration(r.value) + ", past the " +
                 format_duration(d.deadline_s) + " deadline";
      break;
    case detail::Why::budget:
      e.reason = "costs at least " + format_money(r.value) + ", over the " +
                 format_money(d.budget) + " budget";
      break;
    case detail::Why::interruptions:
      e.reason = detail::interruptions_reason(r.value);
      break;
    case detail::Why::batch:
      e.reason = detail::batch_reason(d.global_batch, static_cast<int>(r.value));
      break;
  }
  return e;
}

}  // namespace

nlohmann::json estimate_json(const Estimate& e) {
  nlohmann::json notes = nlohmann::json::array();
  for (const auto& n : e.notes) notes.push_back(n);
  return {
      {"label", e.label()},
      {"provider", e.provider},
      {"instance", e.instance},
      {"region", e.region},
      {"gpu_model", e.gpu_model},
      {"gpus_per_node", e.gpus_per_node},
      {"nodes", e.nodes},
      {"pricing", pricing_name(e.pricing)},
      {"hourly", e.hourly},
      {"price_derived", e.price_derived},
      {"hours", e.hours()},
      {"cost", e.total_cost()},
      {"pareto", e.pareto},
      {"time_s",
       {{"compute", e.time.compute_s},
        {"communication", e.time.communication_s},
        {"staging", e.time.staging_s},
        {"checkpoint", e.time.checkpoint_s},
        {"rework", e.time.rework_s},
        {"restart", e.time.restart_s},
        {"total", e.time.total_s()}}},
      {"steps", e.time.steps},
      {"step_s", e.time.step_s},
      {"cost_usd",
       {{"instances", e.cost.instances},
        {"storage", e.cost.storage},
        {"egress", e.cost.egress},
        {"total", e.cost.total()}}},
      {"checkpoint_interval_s", e.checkpoint_interval_s},
      {"expected_interruptions", e.expected_interruptions},
      {"memory_needed_bytes", e.memory_needed_bytes},
      {"memory_per_gpu_bytes", e.memory_per_gpu_bytes},
      {"sharding", e.sharding},
      {"reserved_break_even", e.reserved_break_even},
      {"price_date", e.price_date},
      {"price_source", e.price_source},
      {"interruption_band", e.interruption_band},
      {"spot_mtbi_s", e.spot_mtbi_s},
      {"tags", e.tags},
      {"notes", notes},
  };
}

const std::vector<Exclusion>& Plan::exclusions() const {
  if (!exclusions_) {
    auto list = std::make_shared<std::vector<Exclusion>>();
    if (data_) {
      // Records that differ only in pricing and give the same reason (on-demand and reserved
      // take the same time) become one line.
      std::vector<detail::ExclusionRecord> merged;
      std::vector<std::string> reasons;
      for (const auto& r : data_->records) {
        auto reason = format(*data_, r).reason;
        bool joined = false;
        for (std::size_t i = merged.size(); i-- > 0 && merged[i].shape == r.shape;) {
          auto& m = merged[i];
          if (m.nodes_lo == r.nodes_lo && m.nodes_hi == r.nodes_hi && m.why == r.why &&
              reasons[i] == reason) {
            m.pricings |= r.pricings;
            m.options += r.options;
            joined = true;
            break;
          }
        }
        if (!joined) {
          merged.push_back(r);
          reasons.push_back(std::move(reason));
        }
      }
      for (const auto& r : merged) list->push_back(format(*data_, r));
    }
    exclusions_ = std::move(list);
  }
  return *exclusions_;
}

std::string Plan::to_json() const {
  nlohmann::json ranked_j = nlohmann::json::array(), frontier_j = nlohmann::json::array(),
                 excl = nlohmann::json::array();
  for (const auto& e : ranked) ranked_j.push_back(estimate_json(e));
  for (const auto& e : frontier) frontier_j.push_back(estimate_json(e));
  for (const auto& x : exclusions())
    excl.push_back({{"subject", x.subject}, {"reason", x.reason}, {"options", x.options}});
  nlohmann::json j = {{"considered", considered}, {"feasible", feasible},
                      {"excluded", excluded()},   {"ranked", ranked_j},
                      {"frontier", frontier_j},   {"exclusions", excl}};
  if (data_) j["catalog_sources"] = data_->catalog_sources;
  return j.dump(2);
}

}  // namespace nubo::cost
