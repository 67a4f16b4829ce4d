// The time and cost model shared by estimate(), the planner and its exhaustive reference: one
// implementation of every formula, so the three agree to the last bit. docs/cost.md states the
// formulas with their sources.
#pragma once

#include <string>
#include <vector>

#include "cost/memory_model.hpp"
#include "device/backend/gpu_catalog.hpp"
#include "nubo/cost.hpp"

namespace nubo::cost::detail {

using nubo::detail::GpuCatalog;
using nubo::detail::GpuModel;

constexpr double kHoursPerMonth = 730.0;  // the providers' billing convention (8760 / 12)
constexpr double kGB = 1e9;               // prices are per GB of 10^9 bytes
// The efficiency of a workload given only by its FLOPs: typical of large dense models (30-50%;
// PaLM, where MFU is defined, reports 46%).
constexpr double kDefaultMfu = 0.4;

// Dense peak of a GPU for a dtype, TFLOP/s; 0 when the GPU does not support it.
double peak_tflops(const GpuModel& gpu, DType dtype);

// Per-GPU all-reduce bandwidth inside one instance, bytes/s per direction (docs/cost.md):
// NVLink: the GPU table's total bidirectional NVLink bandwidth / 2; PCIe: the x16 link of the
// GPU's generation (PCI-SIG: 0.985 GB/s per lane for gen3, doubling each generation).
double derived_link_gbs(const GpuModel& gpu, Interconnect interconnect);

// A workload reduced to the numbers the model needs, validated once.
struct WorkloadModel {
  DType dtype = DType::bf16;
  bool measured = false;
  // Compute work in TFLOP, done at `efficiency` of the peak (a profile's: its measured work, at
  // 1); 0: the GPU's calibrated efficiency for a model of `hidden` (efficiency.hpp).
  double tflop = 0;
  double efficiency = 1;
  double hidden = 0;
  double steps = 0;         // optimizer steps (0: unknown; communication is then not modelled)
  double global_batch = 0;  // samples per step (0: unknown); every data-parallel GPU needs one
  double allreduce_bytes = 0;
  double overlap = 0;
  MemoryModel memory;
  bool communication_modelled = false;  // steps and all-reduce bytes known
  double staged_bytes = 0;              // dataset x compression ratio
  double dataset_bytes = 0;
  double checkpoint_bytes = 0;
  // Sized from the model, not given: only a spot job, which needs them to survive, is charged
  // for writing them.
  bool checkpoint_assumed = false;
  double checkpoint_write_mbps = 0;  // 0: the provider's block storage throughput
  double checkpoint_interval_s = 3600;
  double egress_bytes = 0;
  double storage_months_after = 0;
  std::vector<std::string> notes;
};
WorkloadModel compile(const Workload& workload);
// Throws invalid_argument "<what>: <name> is <v>; it must lie in [<min>, <max>]" for a value out
// of range or not finite.
void check_range(double v, std::string_view what, const char* name, double min, double max);

// The hardware of one option: what the time model reads from instance + GPU table + provider.
struct Hardware {
  const GpuModel* gpu = nullptr;
  int gpus = 0;            // per node
  double link_Bps = 0;     // per GPU, per direction
  double network_Bps = 0;  // per node
  const ProviderPrices* provider = nullptr;
  double compute_scale = 1;  // of the table's peak, as a preflight measured it
};

// The hardware with the rates a preflight measured for its GPU model (request.measured); the
// note that says so, or "" when none applies.
std::string apply_measured(Hardware& h, const std::vector<MeasuredRates>& measured);

// Compute and communication of the whole run on `nodes` nodes, without checkpoints.
struct RunTime {
  double compute_s = 0, communication_s = 0, step_s = 0, staging_s = 0;
  double work_s() const { return compute_s + communication_s; }
};
RunTime run_time(const WorkloadModel& w, const Hardware& h, int nodes, double comm_efficiency);

// Seconds to write one checkpoint: every node writes its share at once (a sharded checkpoint, as
// torch.distributed.checkpoint and DeepSpeed write), each to its own volume.
double checkpoint_write_s(const WorkloadModel& w, const Hardware& h, int nodes);

// The full time breakdown under a pricing (spot: Daly's expected time with interruptions). A job
// is interrupted whenever any of its nodes is: with each node's interruptions a Poisson process
// of mean `node_mtbi_s`, the job's is one of mean node_mtbi_s / nodes.
struct Timing {
  TimeBreakdown time;
  double interval_s = 0;
  double interruptions = 0;  // of the whole job
};
Timing timing(const WorkloadModel& w, const Hardware& h, const RunTime& rt, Pricing pricing,
              double node_mtbi_s, double restart_s, int nodes);

// A spot option whose interruptions would stretch its work more than this many times is no
// option (its expected time grows exponentially with the work between checkpoints); every
// planner excludes it, saying why.
constexpr double kMaxSpotStretch = 10;
inline bool swamped_by_interruptions(const TimeBreakdown& t) {
  return !(t.total_s() <= kMaxSpotStretch * (t.compute_s + t.communication_s));
}
// Why such an option is refused, its expected time `total_s` given.
std::string interruptions_reason(double total_s);

// What the workload lacks for its communication to be modelled: the step count (a batch) when
// the gradient bytes are known, else both.
std::string communication_needs(const WorkloadModel& w);

// Whether each of `gpus` data-parallel GPUs gets at least one sample of a step.
inline bool batch_feeds(const WorkloadModel& w, int gpus) {
  return w.global_batch <= 0 || w.global_batch >= gpus;
}
// Why an option whose GPUs outnumber the batch is refused.
std::string batch_reason(double global_batch, int gpus);

// Storage (block during the run on every node, object storage after) and egress, in $.
double storage_cost(const WorkloadModel& w, const ProviderPrices& p, double total_s, int nodes);

// The hardware of an instance; `provider_fallback` is set when its provider has no price row.
Hardware hardware_of(const Catalog& catalog, const Instance& instance, bool* provider_fallback);
// Spot interruption figures: the request's, else the instance's published band, else the
// provider's defaults.
double spot_mtbi_s(const PlanRequest& request, const ProviderPrices& provider,
                   double instance_mtbi_h);
double spot_restart_s(const PlanRequest& request, const ProviderPrices& provider);
// Throws invalid_argument naming the bad field of a request.
void validate(const PlanRequest& request);
// One option, every figure filled in (the planner materialises its results with this).
Estimate make_estimate(const Catalog& catalog, const Workload& workload, const WorkloadModel& model,
                       const Instance& instance, int nodes, Pricing pricing,
                       const PlanRequest& request);

// The cost of an option: instance hours x price x nodes + the fixed part. Everything that ranks
// options calls this, so equal options cost exactly the same.
inline double option_cost(double total_s, int nodes, double price, double fixed) {
  return (total_s / 3600.0 * nodes) * price + fixed;
}

}  // namespace nubo::cost::detail
