#include <algorithm>
#include <map>
#include <numeric>
#include <tuple>
#include <unordered_set>

#include "common/text.hpp"
#include "cost/planner_index.hpp"

namespace nubo::cost::detail {

bool OrderKey::operator<(const OrderKey& o) const {
  return std::tie(primary, secondary, *name, *region, nodes, pricing) <
         std::tie(o.primary, o.secondary, *o.name, *o.region, o.nodes, o.pricing);
}

std::shared_ptr<const CompiledCatalog> compile_catalog(const Catalog& catalog) {
  std::vector<std::uint32_t> rows(catalog.instances().size());
  std::iota(rows.begin(), rows.end(), 0u);
  return compile_catalog(catalog, rows);
}

std::shared_ptr<const CompiledCatalog> compile_catalog(const Catalog& catalog,
                                                       const std::vector<std::uint32_t>& rows) {
  const auto& in = catalog.instances();
  auto out = std::make_shared<CompiledCatalog>();
  using Key = std::tuple<std::string, int, double, double, std::string, double>;
  std::map<Key, std::size_t> shape_of;
  for (auto r : rows) {
    const Instance& i = in[r];
    Key key{i.gpu_model, i.gpus, i.gpu_link_gbs, i.network_gbps, i.provider, i.spot_mtbi_h};
    auto [it, fresh] = shape_of.emplace(key, out->shapes.size());
    if (fresh) {
      Shape s;
      s.gpu = &GpuCatalog::builtin().get(i.gpu_model);
      s.gpus = i.gpus;
      s.link_gbs = i.gpu_link_gbs;
      s.network_gbps = i.network_gbps;
      s.spot_mtbi_h = i.spot_mtbi_h;
      s.provider = i.provider;
      if (!catalog.providers().empty()) {
        const ProviderPrices* p = &catalog.provider(i.provider);
        s.provider_index = static_cast<std::size_t>(p - catalog.providers().data());
      }
      out->shapes.push_back(std::move(s));
    }
    out->shapes[it->second].rows.push_back(r);
  }
  for (auto& s : out->shapes) {
    for (int p = 0; p < kPricings; ++p) {
      auto& order = s.order[p];
      for (auto r : s.rows)
        if (in[r].price(static_cast<Pricing>(p)) >= 0) order.push_back(r);
      std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
        const double pa = in[a].price(static_cast<Pricing>(p)),
                     pb = in[b].price(static_cast<Pricing>(p));
        return std::tie(pa, in[a].name, in[a].region) < std::tie(pb, in[b].name, in[b].region);
      });
      for (auto r : order) s.prices[p].push_back(in[r].price(static_cast<Pricing>(p)));
    }
    std::unordered_set<std::string_view> names;
    for (auto r : s.rows) names.insert(in[r].name);
    s.subject = in[s.rows.front()].name;
    if (names.size() > 1)
      s.subject += " and " + std::to_string(names.size() - 1) + " more (" + std::to_string(s.gpus) +
                   "x " + s.gpu->model + ", " + s.provider + ")";
    else if (s.rows.size() > 1)
      s.subject += " (" + std::to_string(s.rows.size()) + " regions)";
  }
  return out;
}

}  // namespace nubo::cost::detail
