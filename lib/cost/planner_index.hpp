// The planner's index of a catalog. Options on instances with the same hardware (GPU model and
// count, link and network bandwidth, provider) and interruption band take the same time, and their
// cost rises with the price; so the planner works per such "shape" on price-sorted rows instead of
// per row, and explains exclusions per shape. Built once per catalog change (CostAccess::compiled).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cost/model.hpp"
#include "nubo/cost.hpp"

namespace nubo::cost::detail {

constexpr int kPricings = 4;

struct Shape {
  const GpuModel* gpu = nullptr;
  int gpus = 0;
  double link_gbs = 0, network_gbps = 0;
  double spot_mtbi_h = 0;  // the rows' published interruption band; 0: the provider's default
  std::string provider;
  std::size_t provider_index = 0;   // into Catalog::providers(), after the aws fallback
  std::vector<std::uint32_t> rows;  // catalog order
  std::array<std::vector<std::uint32_t>, kPricings> order;  // priced rows by (price, name, region)
  std::array<std::vector<double>, kPricings> prices;        // their prices, ascending
  std::string subject;  // "p3.2xlarge" or "p3.2xlarge and 49 more (8x V100-SXM2-16GB, aws)"
};

struct CompiledCatalog {
  std::vector<Shape> shapes;
};

std::shared_ptr<const CompiledCatalog> compile_catalog(const Catalog& catalog);
std::shared_ptr<const CompiledCatalog> compile_catalog(const Catalog& catalog,
                                                       const std::vector<std::uint32_t>& rows);

// Why options were left out, in the order the checks run.
enum class Why : std::uint8_t {
  dtype,
  memory,
  no_network,
  no_communication,
  no_price,
  deadline,
  budget,
  interruptions,  // spot: its expected time is more than kMaxSpotStretch times its work
  batch,          // fewer samples in a step than GPUs to share them
};
constexpr std::size_t kWhys = static_cast<std::size_t>(Why::batch) + 1;

struct ExclusionRecord {
  std::uint32_t shape = 0;
  int nodes_lo = 1, nodes_hi = 1;
  std::uint8_t pricings = 0;  // bit (1 << Pricing)
  Why why = Why::dtype;
  // memory: bytes per GPU; deadline and interruptions: the time; budget: the cheapest cost
  double value = 0;
  std::size_t options = 0;
};

// The total order of plans: by the ranked metric, then the other, then name, region, nodes and
// pricing, so that the planner and its exhaustive reference agree exactly.
struct OrderKey {
  double primary, secondary;
  const std::string* name;
  const std::string* region;
  int nodes;
  int pricing;
  bool operator<(const OrderKey& o) const;
};

// The exhaustive reference planner: every (row, nodes, pricing) estimated in full, every
// exclusion written out, everything sorted. Slow and simple; tests and the benchmark compare
// plan() against it.
struct ExhaustivePlan {
  std::vector<Estimate> ranked;  // every feasible option, best first
  std::vector<Estimate> frontier;
  std::vector<std::pair<std::string, std::string>> excluded;  // (option, reason)
  std::array<std::size_t, kWhys> excluded_by{};               // per Why
  std::size_t considered = 0, feasible = 0;
};
ExhaustivePlan plan_exhaustive(const Catalog& catalog, const Workload& workload,
                               const PlanRequest& request);

}  // namespace nubo::cost::detail

namespace nubo::cost::detail {

// What a plan keeps to explain its exclusions when asked (Plan::exclusions()).
struct PlanData {
  std::shared_ptr<const CompiledCatalog> index;
  std::vector<ExclusionRecord> records;
  std::vector<Pricing> pricings;
  DType dtype = DType::f32;
  MemoryModel memory;
  double deadline_s = 0, budget = 0;
  double global_batch = 0;
  std::string communication_needs;  // what the workload lacks, for the no_communication reason
  std::vector<std::string> catalog_sources;
};

// The planner's access to what catalogs and plans keep out of the public headers.
struct CostAccess {
  static const std::shared_ptr<const CompiledCatalog>& compiled(const Catalog& c) {
    return c.compiled_;
  }
  static const std::shared_ptr<const PlanData>& data(const Plan& p) { return p.data_; }
  static void set_data(Plan& p, std::shared_ptr<const PlanData> data) { p.data_ = std::move(data); }
};

}  // namespace nubo::cost::detail
