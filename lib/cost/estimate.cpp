// One option priced in full: the time breakdown, the cost breakdown and the notes that say which
// assumptions it rests on.
#include <cmath>
#include <cstdio>

#include "common/text.hpp"
#include "cost/efficiency.hpp"
#include "cost/model.hpp"
#include "nubo/cost.hpp"
#include "nubo/error.hpp"
#include "nubo/units.hpp"

namespace nubo::cost {
namespace detail {
namespace {

// Where a spot estimate's interruption rate came from, the job's rate when it spans nodes, and
// how many interruptions it expects.
std::string spot_note(const PlanRequest& r, const Instance& in, double node_mtbi_s, int nodes,
                      double interruptions) {
  const std::string source =
      r.spot_mtbi_s > 0 ? "--mtbi"
      : !in.interruption_band.empty()
          ? in.provider + "'s published band, " + in.interruption_band + " a month"
          : in.provider + " default; no published band";
  std::string note = "spot interruptions every " + format_duration(node_mtbi_s) +
                     " per node on average (" + source + ")";
  if (nodes > 1)
    note += "; any of its " + std::to_string(nodes) + " nodes stops the job, so one every " +
            format_duration(node_mtbi_s / nodes);
  char expected[48];
  std::snprintf(expected, sizeof expected, "; %.1f expected over the run", interruptions);
  return note + expected;
}

}  // namespace

Hardware hardware_of(const Catalog& catalog, const Instance& instance, bool* provider_fallback) {
  Hardware h;
  h.gpu = &GpuCatalog::builtin().get(instance.gpu_model);
  h.gpus = instance.gpus;
  h.link_Bps = instance.gpu_link_gbs * 1e9;
  h.network_Bps = instance.network_gbps * 1e9 / 8;
  h.provider = &catalog.provider(instance.provider, provider_fallback);
  return h;
}

double spot_mtbi_s(const PlanRequest& r, const ProviderPrices& p, double instance_mtbi_h) {
  if (r.spot_mtbi_s > 0) return r.spot_mtbi_s;
  return (instance_mtbi_h > 0 ? instance_mtbi_h : p.spot_mtbi_h) * 3600;
}

double spot_restart_s(const PlanRequest& r, const ProviderPrices& p) {
  return r.restart_s >= 0 ? r.restart_s : p.spot_restart_min * 60;
}

void validate(const PlanRequest& r) {
  auto need = [](bool ok, const std::string& what) {
    if (!ok) throw Error(Errc::invalid_argument, "plan request: " + what);
  };
  need(r.min_nodes >= 1 && r.min_nodes <= 4096, "min_nodes must lie in [1, 4096]");
  need(r.max_nodes >= r.min_nodes && r.max_nodes <= 4096,
       "max_nodes must lie in [min_nodes, 4096]");
  need(!r.pricings.empty(), "give at least one pricing");
  for (std::size_t i = 0; i < r.pricings.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      need(r.pricings[i] != r.pricings[j],
           "pricing " + std::string(pricing_name(r.pricings[i])) + " is listed twice");
  need(std::isfinite(r.deadline_s) && r.deadline_s >= 0, "the deadline must be >= 0 (0: none)");
  need(std::isfinite(r.budget) && r.budget >= 0, "the budget must be >= 0 (0: none)");
  need(std::isfinite(r.spot_mtbi_s) && r.spot_mtbi_s >= 0, "the spot MTBI must be >= 0");
  need(std::isfinite(r.restart_s), "the restart time must be finite");
  need(r.comm_efficiency > 0 && r.comm_efficiency <= 1, "comm_efficiency must lie in (0, 1]");
  for (const auto& m : r.measured)
    need(m.compute > 0 && m.compute <= 1 && m.link > 0 && m.link <= 1,
         "measured rates of " + m.gpu_model + " must lie in (0, 1]");
}

Estimate make_estimate(const Catalog& catalog, const Workload& workload, const WorkloadModel& m,
                       const Instance& in, int nodes, Pricing pricing, const PlanRequest& request) {
  Estimate e;
  e.provider = in.provider;
  e.instance = in.name;
  e.region = in.region;
  e.gpu_model = in.gpu_model;
  e.gpus_per_node = in.gpus;
  e.nodes = nodes;
  e.pricing = pricing;
  e.tags = workload.tags;
  e.notes = m.notes;
  bool fallback = false;
  Hardware h = hardware_of(catalog, in, &fallback);
  if (const auto note = apply_measured(h, request.measured); !note.empty()) e.notes.push_back(note);
  if (fallback)
    e.notes.push_back("no storage or network prices for " + in.provider + ": priced as aws");
  const double price = in.price(pricing);
  if (price < 0)
    throw Error(Errc::unavailable,
                in.name + ": the catalog has no " + std::string(pricing_name(pricing)) + " price");
  if (peak_tflops(*h.gpu, m.dtype) <= 0)
    throw Error(Errc::unsupported, in.name + ": " + h.gpu->model + " has no " +
                                       std::string(dtype_name(m.dtype)) + " support");
  if (nodes > 1 && h.network_Bps <= 0)
    throw Error(Errc::unsupported,
                in.name + ": the catalog gives no network bandwidth, so it cannot span nodes");
  e.price_derived = (pricing == Pricing::reserved_1y && in.reserved_1y_derived) ||
                    (pricing == Pricing::reserved_3y && in.reserved_3y_derived);
  if (e.price_derived)
    e.notes.push_back(
        "reserved price derived from the catalog's discount (" +
        std::to_string(static_cast<int>(std::lround(100 * (1 - price / in.on_demand)))) +
        "% off on-demand)");
  if (pricing == Pricing::reserved_1y || pricing == Pricing::reserved_3y) {
    e.reserved_break_even = reserved_terms(in, pricing).break_even_utilisation;
    e.notes.push_back(
        "reserved: priced at its effective hourly rate, which assumes the "
        "reservation is used for other work the rest of its term");
  }
  if (in.gpu_link_derived && in.gpus > 1)
    e.notes.push_back("GPU link bandwidth derived from the GPU table (" +
                      std::string(interconnect_name(in.interconnect)) + ")");
  e.memory_per_gpu_bytes = static_cast<double>(h.gpu->memory_bytes);
  e.memory_needed_bytes =
      memory_per_gpu(m.memory, in.gpus * nodes, e.memory_per_gpu_bytes, &e.sharding);
  if (e.memory_needed_bytes > e.memory_per_gpu_bytes)
    e.notes.push_back("does not fit: " +
                      memory_reason(m.memory, *h.gpu, in.gpus * nodes, e.memory_needed_bytes));
  else if (e.sharding > 0)
    e.notes.push_back("fits with ZeRO-" + std::to_string(e.sharding) +
                      " (--zero): the model states are partitioned over its " +
                      std::to_string(in.gpus * nodes) + " GPUs");
  if (!batch_feeds(m, in.gpus * nodes))
    e.notes.push_back("cannot run as asked: " + batch_reason(m.global_batch, in.gpus * nodes));
  if (!m.communication_modelled && in.gpus * nodes > 1)
    e.notes.push_back("communication between its " + std::to_string(in.gpus * nodes) +
                      " GPUs not modelled: " + communication_needs(m));
  const RunTime rt = run_time(m, h, nodes, request.comm_efficiency);
  if (m.efficiency <= 0) {
    char note[160];
    std::snprintf(note, sizeof note, "efficiency %.0f%% of peak for a hidden size of %.0f, ",
                  100 * model_flops_utilisation(*h.gpu, m.hidden), m.hidden);
    e.notes.push_back(note + efficiency_basis(*h.gpu) + " (--mfu pins it)");
  }
  const double mtbi = spot_mtbi_s(request, *h.provider, in.spot_mtbi_h);
  const Timing t = timing(m, h, rt, pricing, mtbi, spot_restart_s(request, *h.provider), nodes);
  e.price_date = pricing == Pricing::spot && !in.spot_date.empty() ? in.spot_date : in.price_date;
  e.price_source = in.source;
  e.interruption_band = in.interruption_band;
  e.time = t.time;
  e.checkpoint_interval_s = t.interval_s;
  e.expected_interruptions = t.interruptions;
  if (pricing == Pricing::spot) {
    e.spot_mtbi_s = mtbi;
    e.notes.push_back(spot_note(request, in, mtbi, nodes, t.interruptions));
    if (m.checkpoint_bytes <= 0)
      e.notes.push_back("spot without checkpoints: an interruption loses all work so far");
    if (swamped_by_interruptions(t.time)) e.notes.push_back(interruptions_reason(t.time.total_s()));
  }
  const double total_s = e.time.total_s();
  e.hourly = price * nodes;
  e.cost.instances = option_cost(total_s, nodes, price, 0);
  e.cost.storage = storage_cost(m, *h.provider, total_s, nodes);
  e.cost.egress = egress_cost(*h.provider, m.egress_bytes);
  return e;
}

}  // namespace detail

bool gpu_model_matches(std::string_view model, std::string_view filter) {
  if (filter.empty()) return true;
  const auto m = text::lower(model), f = text::lower(filter);
  for (auto at = m.find(f); at != std::string::npos; at = m.find(f, at + 1))
    if (at == 0 || m[at - 1] == '-') return true;
  return false;
}

Workload Workload::from_profile(const Profile& profile, double epochs) {
  Workload w;
  w.profile = profile;
  w.epochs = epochs;
  w.dtype = profile.dtype;
  // The interval that ran is the one priced (on-demand and reserved; spot plans its own).
  w.checkpoint_interval_s = profile.checkpoint_interval_s;
  return w;
}

Estimate estimate(const Catalog& catalog, const Workload& workload, const Instance& instance,
                  int nodes, Pricing pricing, const PlanRequest& request) {
  detail::validate(request);
  if (nodes < 1 || nodes > 4096)
    throw Error(Errc::invalid_argument, "estimate: nodes must lie in [1, 4096]");
  const auto model = detail::compile(workload);
  return detail::make_estimate(catalog, workload, model, instance, nodes, pricing, request);
}

}  // namespace nubo::cost
