#include "cost/sources/rows.hpp"

#include <algorithm>
#include <cmath>

#include "common/text.hpp"
#include "cost/sources/checks.hpp"
#include "cost/sources/facts.hpp"
#include "cost/sources/gpu_names.hpp"
#include "nubo/error.hpp"

namespace nubo::cost::sources {
namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const auto n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace

double quote_number(std::string_view text, const char* column, std::string& problem) {
  if (text.empty()) return -1;
  try {
    return text::parse_double(text, column, 0, 1e7);
  } catch (const Error& e) {
    problem = e.what();
    return -1;
  }
}

void RowBuilder::skip(const Quote& q, std::string reason) {
  out_.skipped.push_back({q.where, q.name + (q.name.empty() ? "" : ": ") + std::move(reason)});
}

const nubo::detail::GpuModel* RowBuilder::corrected_gpu(const Quote& q,
                                                        const nubo::detail::GpuModel& said) {
  const auto* f = facts_of(input_.provider, q.name);
  if (!f || !f->gpu || f->gpu == &said) return &said;
  if (corrected_.insert(q.name).second)
    out_.corrected.push_back({q.where, q.name + ": the source says " + said.model +
                                           "; the instance has " + f->gpu->model +
                                           " (instance_facts.csv)"});
  return f->gpu;
}

void RowBuilder::add(const Quote& q) {
  ++out_.records;
  if (q.name.empty()) return skip(q, "no instance name");
  if (q.region.empty()) return skip(q, "no region");
  // The zone is not kept, but keys the row: checked as the names kept are (check_rows).
  if (auto why = check_text(q.zone, "zone"); !why.empty()) return skip(q, why);
  if (!(q.gpus >= 1 && q.gpus <= 64 && q.gpus == std::floor(q.gpus)))
    return skip(q, "GPU count " + std::to_string(q.gpus) + " is not a whole number from 1 to 64");
  const auto hint = q.name + " " + q.hint;
  auto match = match_gpu(q.gpu_name, q.gpu_memory_gib, hint);
  if (!match.model && q.gpu_memory_gib > 0 && q.gpus > 1) {
    // Some catalogs state the instance's total memory where the GPU's is meant.
    auto per_gpu = match_gpu(q.gpu_name, q.gpu_memory_gib / q.gpus, hint);
    if (per_gpu.model) match = per_gpu;
  }
  if (!match.model) return skip(q, match.problem);
  match.model = corrected_gpu(q, *match.model);
  if (q.on_demand < 0 && q.spot < 0) return skip(q, "no price");
  for (auto [price, what] : {std::pair{q.on_demand, "on-demand"}, {q.spot, "spot"}})
    if (price >= 0)
      if (auto why = check_price(*match.model, q.gpus, q.vcpus, price, what); !why.empty())
        return skip(q, why);
  if (q.spot >= 0 && q.on_demand >= 0)
    if (auto why = check_below_on_demand(q.spot, q.on_demand, "spot"); !why.empty())
      return skip(q, why);
  const auto key = text::lower(q.name) + '\n' + text::lower(q.region) + '\n' + text::lower(q.zone) +
                   (q.on_demand >= 0 ? "\no" : "\n") + (q.spot >= 0 ? "s" : "");
  auto [it, fresh] = seen_.emplace(key, q.where);
  if (!fresh) return skip(q, "duplicates " + it->second);

  auto [at, new_group] = group_of_.emplace(q.name + '\n' + q.region, groups_.size());
  if (new_group) groups_.emplace_back();
  auto& g = groups_[at->second];
  if (!g.gpu) {
    g.first = q;
    g.gpu = match.model;
  } else if (g.gpu != match.model || g.first.gpus != q.gpus) {
    return skip(q, "disagrees with " + g.first.where + " on the GPUs of " + q.name);
  }
  if (q.on_demand >= 0) g.on_demand.push_back(q.on_demand);
  if (q.spot >= 0) g.spot.push_back(q.spot);
}

void RowBuilder::finish() {
  for (auto& g : groups_) {
    const auto& q = g.first;
    if (g.on_demand.empty()) {
      skip(q, "spot prices only: no on-demand price in " + q.region);
      continue;
    }
    Instance in;
    in.provider = input_.provider;
    in.name = q.name;
    in.region = q.region;
    in.gpu_model = g.gpu->model;
    in.accelerator = q.gpu_name;
    in.gpus = static_cast<int>(q.gpus);
    in.vcpus = static_cast<int>(q.vcpus);
    in.memory_gib = q.memory_gib;
    in.on_demand = median(g.on_demand);
    in.reserved_1y = in.reserved_3y = -1;  // derived, unless a price list publishes them
    if (!g.spot.empty()) {
      in.spot = std::min(median(g.spot), in.on_demand);
      in.spot_lowest = *std::min_element(g.spot.begin(), g.spot.end());
      in.spot_quotes = static_cast<int>(g.spot.size());
      in.spot_date = input_.date;
    }
    if (const auto* f = facts_of(in.provider, in.name)) {
      in.interconnect = f->interconnect;
      in.network_gbps = f->network_gbps;
    } else {
      in.interconnect = implied_interconnect(*g.gpu, in.gpus);
    }
    in.price_date = input_.date;
    in.source = q.where;
    if (g.on_demand.size() > 1)
      in.source += " and " + std::to_string(g.on_demand.size() - 1) + " more zones";
    out_.instances.push_back(std::move(in));
  }
  groups_.clear();
  group_of_.clear();
}

}  // namespace nubo::cost::sources
