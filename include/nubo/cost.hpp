// Cost: what a job will take and cost on each cloud instance, and which one to pick.
//
//   catalogs   instances (embedded CSV with sources and price dates; user CSV/JSON add or replace
//              rows), storage and network prices per provider, GPU figures from the GPU model table
//   workload   measured (a nubo-train profile) or analytic (FLOPs, dtype, MFU)
//   time       compute + communication + staging + checkpoints + expected rework, each reported
//   pricing    on-demand, reserved 1y/3y (effective hourly, break-even utilisation), spot with the
//              Young/Daly checkpoint interval, storage, egress, tags, rent or own
//   planner    instance x node count x pricing, filtered, ranked, Pareto frontier, every exclusion
//              explained
//   meter      money spent so far and the projected total of a running job
//
// docs/cost.md states every formula and its source.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "nubo/dtype.hpp"
#include "nubo/export.hpp"
#include "nubo/preflight.hpp"
#include "nubo/units.hpp"

namespace nubo::cost {

enum class Pricing { on_demand = 0, spot = 1, reserved_1y = 2, reserved_3y = 3 };
// "on-demand", "spot", "reserved-1y", "reserved-3y"
NUBO_API std::string_view pricing_name(Pricing p) noexcept;
// Accepts the names above (and "od", "1y", "3y"); throws invalid_argument naming the accepted ones.
NUBO_API Pricing parse_pricing(std::string_view text);

enum class Interconnect { none = 0, pcie = 1, nvlink = 2, nvswitch = 3 };
NUBO_API std::string_view interconnect_name(Interconnect i) noexcept;

// ---- Catalogs ----------------------------------------------------------------------------

namespace detail {
struct CompiledCatalog;  // the planner's index of a catalog (lib/cost/planner_index.hpp)
struct PlanData;         // a plan's compact exclusion records (lib/cost/planner_index.hpp)
struct CostAccess;       // the planner's way to both (lib/cost/planner_index.hpp)
struct ImportedSource;   // a public source read, not yet added (lib/cost/catalog_sources.cpp)
}  // namespace detail

struct NUBO_API Instance {
  std::string provider;   // "aws", "azure", "gcp", ...
  std::string name;       // "p4d.24xlarge"
  std::string region;     // "us-east-1"
  std::string gpu_model;  // a key of the GPU model table, e.g. "A100-SXM4-40GB"
  int gpus = 0;
  Interconnect interconnect = Interconnect::none;
  int vcpus = 0;
  double memory_gib = 0;
  double network_gbps = 0;
  double on_demand = 0;                     // $/h for the whole instance
  double spot = -1;                         // $/h, the median of its zones' quotes; < 0: not known
  double spot_lowest = -1;                  // $/h, the cheapest zone's quote; < 0: not known
  int spot_quotes = 0;                      // zones (or quotes) behind `spot`
  double reserved_1y = 0, reserved_3y = 0;  // effective $/h
  bool reserved_1y_derived = false, reserved_3y_derived = false;
  double gpu_link_gbs = 0;  // per-GPU all-reduce bandwidth, GB/s per direction
  bool gpu_link_derived = false;
  // The provider's published interruption frequency ("<5%", AWS Spot Advisor) and the mean time
  // between interruptions nubo reads from it (docs/cost.md); "" and 0: the provider's default.
  std::string interruption_band;
  double spot_mtbi_h = 0;
  std::string price_date, spot_date;
  std::string source;  // the row's cited source, and where it was read ("mine.csv:4")
  // The source's own name for the GPUs ("A100-80GB", as SkyPilot's catalog spells it), for
  // job files; "" when the row came without one.
  std::string accelerator;

  // $/h under a pricing; < 0 when the catalog has no such price.
  double price(Pricing p) const;
};

// A row a lenient import left out, and why: "skypilot/aws.csv:12", "p5.48xlarge: spot price
// $30/h is above on-demand $20/h".
struct SkippedRow {
  std::string where;
  std::string reason;
};

// One source of the catalog's prices: a file in a public format, embedded, cached by
// `nubo-cost catalog update`, or given by the user.
struct CatalogSource {
  std::string name;      // "skypilot-aws", "aws-spot-advisor", ...
  std::string format;    // "skypilot", "gpuhunt", "spot-advisor", "aws-price-list", "azure-retail"
  std::string provider;  // the provider it prices ("aws")
  std::string url;       // where an update fetches it
  std::string origin;    // "embedded", "cache", "skypilot cache", or the file's path
  std::string fetched;   // when it was fetched, UTC: "2026-12-03T10:00:00Z"
  std::string etag;      // the server's, for a conditional update
  std::size_t rows = 0;  // instance rows, reserved prices or interruption bands it gave
  std::size_t records = 0;  // records read
  std::vector<SkippedRow> skipped;
  // Rows kept with a known fact in place of what the source said (a PCIe GPU it called SXM).
  std::vector<SkippedRow> corrected;

  NUBO_API double age_days() const;  // days since `fetched`; < 0 when it is not a time
};

// Where the tools find fetched catalogs: nubo's cache ($XDG_CACHE_HOME/nubo/catalog, else
// ~/.cache/nubo/catalog) and SkyPilot's (~/.sky/catalogs). Empty: those defaults.
struct CatalogPaths {
  std::string cache_dir;
  std::string skypilot_dir;
  bool use_cache = true;
  bool use_skypilot = true;
  static std::string default_cache_dir();
};

struct ProviderPrices {
  std::string provider;
  double object_storage_gb_month = 0;
  double block_storage_gb_month = 0;
  double block_storage_mbps = 0;
  // Internet egress per month: (up to this many GB, $/GB); the last bound is infinity.
  std::vector<std::pair<double, double>> egress_tiers;
  double cross_zone_gb = 0;
  double spot_mtbi_h = 0;
  double spot_restart_min = 0;
  std::string price_date, source;
};

// Discounts that derive reserved prices where none is published: reserved = (1 - d) x on-demand.
// The defaults are nubo's assumption (docs/cost.md); providers advertise 50-75% off.
struct ReservedDiscounts {
  double one_year = 0.40;
  double three_year = 0.60;
};

class NUBO_API Catalog {
 public:
  // The embedded catalogs, as builtin() and as Python's Catalog(): one meaning everywhere.
  Catalog();
  // The embedded catalogs (lib/cost/instances.csv, providers.csv).
  static Catalog builtin(ReservedDiscounts discounts = {});
  // No instances; the built-in provider prices.
  static Catalog empty(ReservedDiscounts discounts = {});

  // Reads a CSV (header as instances.csv, or providers.csv) or a JSON catalog
  // ({"instances": [...], "providers": [...]}) from a file; the format follows the extension
  // (.csv, .json), else the first character. Rows with the key of an existing row replace it,
  // others are added; with replace = true the instance list is replaced by the file's. Every
  // error names the file, the line and the reason; on error the catalog is unchanged.
  void load_file(const std::string& path, bool replace = false);
  void load_text(std::string_view text, const std::string& source, bool replace = false);

  // Re-derives every derived reserved price. Each discount must lie in [0, 1).
  void set_reserved_discounts(ReservedDiscounts discounts);
  ReservedDiscounts reserved_discounts() const { return discounts_; }

  const std::vector<Instance>& instances() const { return instances_; }
  // By instance name (case-insensitive) and, when given, region; without a region, the region
  // where it is cheapest on demand; nullptr if none.
  const Instance* find(std::string_view name, std::string_view region = {}) const;
  // As find; throws not_found naming close matches.
  const Instance& get(std::string_view name, std::string_view region = {}) const;
  // A provider's storage and network prices; falls back to "aws" (fallback set to true).
  const ProviderPrices& provider(std::string_view name, bool* fallback = nullptr) const;
  const std::vector<ProviderPrices>& providers() const { return providers_; }
  // Where the rows came from: "embedded providers.csv", "mine.csv", ...
  const std::vector<std::string>& sources() const { return sources_; }

  // The embedded snapshot as refreshed since: each source's newest version among the embedded
  // one, `nubo-cost catalog update`'s cache and SkyPilot's local catalogs. What the tools use;
  // it never fetches anything itself.
  static Catalog current(const CatalogPaths& paths = {});
  // The public sources the snapshot holds and an update fetches, without their rows.
  static std::vector<CatalogSource> known_sources();
  // Adds the rows of a file in a public format (`source.format`). Lenient: a row that fails a
  // check is skipped and listed in source_info() with its line and reason; a file that is not
  // that format at all (its header lacks a column) throws invalid_argument.
  void import_text(std::string_view text, const CatalogSource& source);
  void import_file(const std::string& path, CatalogSource source);
  // Every imported source with what it gave and skipped.
  const std::vector<CatalogSource>& source_info() const { return imported_; }

  void add(Instance instance);  // validated like a file row; replaces a row with the same key

 private:
  friend struct detail::CostAccess;
  struct NoInstances {};
  explicit Catalog(NoInstances);  // empty()'s: the provider prices only
  // Validates the rows and adds them, each replacing the row with its key.
  void add_rows(std::vector<Instance> rows);
  // Read sources added, their rows first and then what they lay over them; the planner's index
  // is left for changed().
  void apply(std::vector<detail::ImportedSource> read);
  // A parsed file or text: its rows and prices added as one change, or none of them.
  void merge(std::vector<Instance> rows, std::vector<ProviderPrices> providers,
             const std::string& source, bool replace);
  void changed();

  std::vector<Instance> instances_;
  std::vector<ProviderPrices> providers_;
  std::vector<std::string> sources_;
  std::vector<CatalogSource> imported_;
  ReservedDiscounts discounts_;
  std::shared_ptr<const detail::CompiledCatalog> compiled_;
};

// ---- Refreshing the catalog ---------------------------------------------------------------

// `nubo-cost catalog update`: fetches each public source over HTTPS into the user's cache. A
// source whose new version fails (an HTTP error, a truncated or malformed body, too many bad
// rows) keeps its last good version. Nothing else fetches: plans read what is cached.
struct CatalogUpdateOptions {
  std::string cache_dir;                    // "": CatalogPaths::default_cache_dir()
  std::vector<std::string> sources;         // names to refresh; empty: every known source
  std::map<std::string, std::string> urls;  // name -> URL, over NUBO_CATALOG_URL_<NAME> and the
                                            // known URL
  double timeout_s = 30;                    // connecting, and the longest stall of a transfer
  double total_timeout_s = 600;             // one source at most
  double max_skipped = 0.5;  // a new version that skips more of its records than this is refused
};

enum class UpdateStatus { updated = 0, not_modified = 1, failed = 2 };
NUBO_API std::string_view update_status_name(UpdateStatus s) noexcept;  // "updated", ...

struct CatalogUpdate {
  std::string name, url;
  UpdateStatus status = UpdateStatus::failed;
  std::string message;      // why it failed, and which version stays
  std::size_t records = 0;  // of the new version
  std::size_t skipped = 0;
  std::string fetched;  // the cached version's fetch time after the update; "" when none
};

// One entry per source, in the order of known_sources(); throws only for bad options (an
// unknown source name, no cache folder).
NUBO_API std::vector<CatalogUpdate> update_catalog(const CatalogUpdateOptions& options = {});

// ---- The workload -------------------------------------------------------------------------

// What a nubo-train run measured (schema: docs/profile.schema.json).
struct NUBO_API Profile {
  std::string backend;       // "cpu", "sim" or "cuda"
  std::string device_model;  // GPU model key, or the CPU's name
  int devices = 1;           // workers that shared each step
  int processes = 1;
  double device_peak_tflops = 0;  // the measured device's peak for dtype; 0: look it up
  // Host workers (CPU): the threads each ran its GEMMs on, and the CPUs the workers of a host
  // shared; 0 for GPUs, or unknown. They let the model scale a run on the host's cores.
  int host_threads = 0;
  int host_cpus = 0;
  DType dtype = DType::f32;
  double global_batch = 0;          // samples per step, all workers together
  double steps = 0;                 // steps measured
  double step_time_s = 0;           // mean wall time of one step
  double compute_time_s = 0;        // per step, on one worker
  double gemm_time_s = 0;           // of compute_time_s, in GEMMs (host workers; 0: unknown)
  double communication_time_s = 0;  // per step, all-reduce time on the critical path
  double allreduce_bytes = 0;       // bytes all-reduced per step (per worker)
  double samples_per_s = 0;
  double checkpoint_time_s = 0;  // mean time to write one checkpoint
  // Mean training time one periodic checkpoint stopped the run for: its write when synchronous;
  // the snapshot of the state (and any wait for the write before) when written in the background.
  double checkpoint_stall_s = 0;
  // The interval the run checkpointed at (seconds; 0: not by time), and, when it was chosen by
  // Daly's formula, the expected fraction of the work lost to checkpoints and interruptions.
  double checkpoint_interval_s = 0;
  double checkpoint_expected_waste = 0;
  double checkpoint_bytes = 0;
  double dataset_samples = 0;  // one epoch
  double dataset_bytes = 0;
  double parameter_bytes = 0;
  double memory_per_device_bytes = 0;
  // How the run kept its model (0: unknown): its parameter count, the ZeRO stage it sharded at
  // and its optimizer's rule, so that a plan for another GPU count scales the model states by
  // the sharded optimizer's formulas (nubo::sharded_memory) and keeps the rest as measured.
  double parameters = 0;
  int zero_stage = 0;
  std::string optimizer = "adam";
  std::string source;  // the file it came from

  // Errors name `source`, the field and the problem.
  static Profile parse(std::string_view json, const std::string& source);
  static Profile load(const std::string& path);
  std::string to_json() const;
};

// The optimizer whose states a model-described workload keeps: Adam(W) two fp32 states per
// parameter, SGD with momentum one.
enum class Optimizer { adam = 0, sgd = 1 };
NUBO_API std::string_view optimizer_name(Optimizer o) noexcept;  // "adam", "sgd"
NUBO_API Optimizer parse_optimizer(std::string_view text);       // "adam", "adamw", "sgd"

struct NUBO_API Workload {
  std::string name;
  // Described by its model: `parameters` (7e9) with the training `tokens` (or samples x
  // sequence_length) gives what is not given: the FLOPs (6 N D), the GPU memory per worker
  // (weights, gradients and optimizer states under ZeRO stage `sharding`, plus activations) and
  // the gradient bytes all-reduced per step (docs/cost.md, "Workloads by model").
  double parameters = 0;
  double tokens = 0;
  double sequence_length = 0;  // tokens per sample; 0: 2048 (tokens_per_sample())
  double micro_batch = 1;      // samples per GPU in one forward pass (activations)
  Optimizer optimizer = Optimizer::adam;
  int sharding =
      -1;  // ZeRO stage: 0 plain data parallelism, 1-3; -1 (default): the least that fits
  // Analytic: total training FLOPs, or flops_per_sample x samples x epochs.
  double total_flops = 0;
  double flops_per_sample = 0;
  double samples = 0;  // per epoch
  double epochs = 1;
  double global_batch = 0;  // samples per step; with samples it gives the step count
  DType dtype = DType::bf16;
  // Achievable fraction of peak (model FLOPs utilisation, as PaLM defines it). 0 (the default):
  // for a model given by its parameters, calibrated from the GPU's architecture and the model's
  // size on published runs (docs/cost.md, "Efficiency"); otherwise 0.4, typical of large dense
  // models (30-50%).
  double mfu = 0;

  // Measured: a profile, scaled by the target's peak and link bandwidth (analytic fields unused).
  std::optional<Profile> profile;

  // Both.
  double parameter_bytes = 0;       // gradient bytes all-reduced per step (analytic)
  double memory_per_gpu_bytes = 0;  // GPU memory one worker needs
  double dataset_bytes = 0;         // staged onto each node before the run
  // Compressed size / original size of the staged data, as nubo-xfer pack reports it; 1: raw.
  double compression_ratio = 1.0;
  double checkpoint_bytes = 0;
  double checkpoint_write_mbps = 0;  // 0: the provider's block storage throughput
  double checkpoint_interval_s = 0;  // on-demand and reserved; 0: one checkpoint per hour
  // Fraction of communication hidden behind compute; -1 (the default): hidden behind the
  // backward pass, so only what outlasts it is exposed.
  double overlap = -1;
  double egress_bytes = 0;                  // results downloaded to the internet afterwards
  double storage_months_after = 0;          // keep dataset + checkpoint in object storage this long
  std::map<std::string, std::string> tags;  // "project" -> "vision", "team" -> "ml"

  // Tokens per sample: sequence_length, else 2048 (GPT-3's context), for the activation
  // estimate and the step count of a workload given by tokens.
  double tokens_per_sample() const { return sequence_length > 0 ? sequence_length : 2048; }
  // A measured workload from a profile: `epochs` passes over profile.dataset_samples.
  static Workload from_profile(const Profile& profile, double epochs);
  // The training FLOPs the analytic fields give: total_flops; else 6 x parameters x tokens
  // (Kaplan et al. 2020; tokens, or samples x sequence_length x epochs); else flops_per_sample
  // x samples x epochs; 0 when none is given.
  double training_flops() const;
};

// A workload from named text fields, as nubo-cost plan's flags name them ("params" = "7B",
// "tokens" = "2e9", "flops", "profile" = a nubo-train profile's path, "gpu-memory" = "30G", ...;
// docs/cost.md lists them), with their units: the one reading of a workload description for
// the command line and queue files. `where` prefixes each field in errors ("--" gives
// "--params"). Error(invalid_argument) for an unknown field, a bad value, or too little to
// price.
NUBO_API Workload workload_from_fields(const std::map<std::string, std::string>& fields,
                                       const std::string& where);

// ---- Estimates ----------------------------------------------------------------------------

struct TimeBreakdown {
  double compute_s = 0;
  double communication_s = 0;
  double staging_s = 0;
  double checkpoint_s = 0;  // writing checkpoints
  double rework_s = 0;      // expected work redone after interruptions (spot)
  double restart_s = 0;     // expected time to restart after interruptions (spot)
  double steps = 0;
  double step_s = 0;  // compute + exposed communication of one step
  double total_s() const {
    return compute_s + communication_s + staging_s + checkpoint_s + rework_s + restart_s;
  }
};

struct CostBreakdown {
  double instances = 0;  // instance hours x price x nodes
  double storage = 0;    // block storage during the run + object storage afterwards
  double egress = 0;
  double total() const { return instances + (storage + egress); }
};

struct NUBO_API Estimate {
  std::string provider, instance, region, gpu_model;
  int gpus_per_node = 0;
  int nodes = 1;
  Pricing pricing = Pricing::on_demand;
  double hourly = 0;  // $/h for all nodes
  bool price_derived = false;
  TimeBreakdown time;
  CostBreakdown cost;
  double checkpoint_interval_s = 0;
  double expected_interruptions = 0;  // spot: of the whole job (any node's stops it), over the run
  double memory_needed_bytes = 0, memory_per_gpu_bytes = 0;
  int sharding = -1;               // the ZeRO stage memory_needed_bytes assumes; -1: not modelled
  double reserved_break_even = 0;  // reserved pricings: utilisation above which it pays
  // The price in force: its date and source, so a later report prices past work at what it
  // cost then; and for spot, the interruption band and one node's mean time between
  // interruptions (the job's is spot_mtbi_s / nodes).
  std::string price_date, price_source;
  std::string interruption_band;
  double spot_mtbi_s = 0;
  bool pareto = false;
  std::map<std::string, std::string> tags;
  std::vector<std::string> notes;  // assumptions that apply ("storage priced as aws", ...)

  double hours() const { return time.total_s() / 3600.0; }
  // GPU-hours, the figure training reports publish: every GPU of every node for the whole run.
  double gpu_hours() const { return hours() * gpus_per_node * nodes; }
  double total_cost() const { return cost.total(); }
  std::string label() const;  // "p4d.24xlarge x2 spot"
};

// What a preflight (nubo-smi check) measured of one GPU model, as fractions of what the model
// should do: offers of that model are priced at these rates. Never above 1: a GPU measured at
// or above its expected figures is priced by the table, as any other.
struct MeasuredRates {
  std::string gpu_model;  // the GPU table's key, e.g. "H100-SXM5-80GB"
  double compute = 1;     // GEMM in the workload's precision, in (0, 1]
  double link = 1;        // GPU-to-GPU copies, in (0, 1]
  std::string source;     // where they come from, for the notes: "check.json"
};

// The rates of each GPU model a preflight report checked (the median over its GPUs), for the
// workload's precision; `source` names the report in the estimates' notes.
NUBO_API std::vector<MeasuredRates> measured_rates(const device::PreflightReport& report,
                                                   DType dtype, const std::string& source);

struct PlanRequest {
  std::vector<Pricing> pricings = {Pricing::on_demand};
  int min_nodes = 1, max_nodes = 1;
  double deadline_s = 0;              // 0: none
  double budget = 0;                  // $; 0: none
  std::string gpu, provider, region;  // filters: the GPU model as gpu_model_matches() reads it,
                                      // exact provider and region; empty: all
  enum class Rank { cost, time } rank = Rank::cost;
  std::size_t limit = 10;                    // ranked plans returned; 0: all
  double spot_mtbi_s = 0;                    // 0: the provider's default
  double restart_s = -1;                     // < 0: the provider's default
  double comm_efficiency = 1.0;              // achieved / peak link bandwidth, in (0, 1]
  std::vector<MeasuredRates> measured = {};  // rates a preflight measured, by GPU model
};

// Options left out, grouped: `options` (instance, nodes, pricing) triples share subject and reason.
struct Exclusion {
  std::string subject;  // "p3.2xlarge x1-4 (on-demand, spot)"
  std::string reason;   // "needs 45.0 GiB of GPU memory per GPU; V100-SXM2-16GB has 16.0 GiB"
  std::size_t options = 0;
};

class NUBO_API Plan {
 public:
  std::vector<Estimate> ranked;    // feasible, best first, at most request.limit
  std::vector<Estimate> frontier;  // the Pareto frontier of cost and time, fastest first
  std::size_t considered = 0, feasible = 0;

  // Every excluded option, explained; made on the first call (make that first call from one
  // thread; after it, several threads may read).
  const std::vector<Exclusion>& exclusions() const;
  std::size_t excluded() const { return considered - feasible; }
  // The whole plan as JSON (docs/cost.md).
  std::string to_json() const;

 private:
  friend struct detail::CostAccess;
  std::shared_ptr<const detail::PlanData> data_;  // the records behind exclusions()
  mutable std::shared_ptr<std::vector<Exclusion>> exclusions_;
};

// Whether a GPU model is one a filter names: the filter (any case) starts the model's key or one
// of its parts after a '-' ("A100" and "sxm4" match A100-SXM4-80GB; "H200" does not match
// GH200-96GB); an empty filter matches every model.
NUBO_API bool gpu_model_matches(std::string_view model, std::string_view filter);

// Plans a workload over a catalog; throws invalid_argument for a bad request or workload.
NUBO_API Plan plan(const Catalog& catalog, const Workload& workload, const PlanRequest& request);
// One option, fully broken down, whether or not it meets the request's deadline or budget.
NUBO_API Estimate estimate(const Catalog& catalog, const Workload& workload,
                           const Instance& instance, int nodes, Pricing pricing,
                           const PlanRequest& request = {});

// ---- Serving (inference) -----------------------------------------------------------------

// A model served for generation: how fast tokens must come out, and how fast each must follow
// the last. Decoding is bound by memory bandwidth (every step reads the weights and the batch's
// KV cache), so the model sizes each replica's batch from the GPUs' memory and bandwidth
// (docs/cost.md, "Serving").
struct InferenceWorkload {
  double parameters = 0;           // 7e9
  DType dtype = DType::bf16;       // of weights and KV cache (compute peak: this dtype's)
  double bytes_per_parameter = 0;  // the weights' storage; 0: the dtype's (1 for int8, 0.5 int4)
  double tokens_per_s = 0;         // output tokens per second, all requests together
  double requests_per_s = 0;       // or requests per second ...
  double tokens_per_request = 0;   // ... each generating this many tokens
  double context_tokens = 4096;    // prompt + output per sequence: its KV cache
  double latency_s = 0;            // time per output token at most; 0: no limit
  double kv_bytes_per_token = 0;   // 0: estimated for a dense transformer of this size
  double memory_efficiency = 0.8;  // achieved fraction of the peak memory bandwidth
};

struct ServingOption {
  std::string provider, instance, region, gpu_model;
  int gpus_per_node = 0;
  int instances = 1;  // needed for the target rate
  Pricing pricing = Pricing::on_demand;
  int gpus_per_replica = 1;  // tensor-parallel group holding one copy of the weights
  int replicas_per_instance = 1;
  double batch = 0;            // sequences decoded together per replica
  double token_latency_s = 0;  // one decode step: time per output token
  double tokens_per_s = 0;     // per instance
  double hourly = 0;           // $/h for all instances
  double dollars_per_million_tokens = 0;
  std::string price_date, price_source;
  std::vector<std::string> notes;
  std::string label() const;  // "g5.xlarge x2 on-demand"
};

struct NUBO_API ServingPlan {
  std::vector<ServingOption> ranked;  // cheapest per hour first, at most request.limit
  std::vector<Exclusion> exclusions;  // one per instance type and pricing left out
  std::size_t considered = 0, feasible = 0;
  std::string to_json() const;
};

// The cheapest instances that serve the workload at its rate within its latency; the request's
// pricings, filters and limit apply (its nodes, deadline and budget do not: the count of
// instances follows from the rate). Throws invalid_argument for a bad workload.
NUBO_API ServingPlan plan_serving(const Catalog& catalog, const InferenceWorkload& workload,
                                  const PlanRequest& request);

// ---- Pricing helpers ----------------------------------------------------------------------

// Young (1974) and Daly (2006): checkpoint every `interval` seconds when writing one takes
// `write_s` and interruptions come every `mtbi_s` on average; `restart_s` per interruption.
struct NUBO_API CheckpointPlan {
  double young_interval_s = 0;       // sqrt(2 delta M)
  double daly_interval_s = 0;        // Daly's higher-order optimum (the one used)
  double expected_wall_s = 0;        // Daly's expected completion time of `work_s`
  double write_s = 0;                // time spent writing checkpoints
  double lost_work_s = 0;            // expected work redone
  double restart_s = 0;              // expected restart time
  double interruptions = 0;          // expected number
  double overhead_fraction() const;  // (expected_wall - work) / work
};
NUBO_API CheckpointPlan checkpoint_plan(double work_s, double write_s, double mtbi_s,
                                        double restart_s, double interval_s = 0);

struct ReservedTerms {
  double hourly = 0;
  double discount = 0;                // 1 - hourly / on-demand
  double break_even_utilisation = 0;  // hourly / on-demand
  bool derived = false;
};
NUBO_API ReservedTerms reserved_terms(const Instance& instance, Pricing term);

// Internet egress of `bytes` in one month through the provider's tiers.
NUBO_API double egress_cost(const ProviderPrices& prices, double bytes);

// Rent or own: a machine bought for `hardware_price` and run `years` against renting the cloud
// instance at `cloud_hourly` for the hours it is used.
struct OwnRequest {
  double hardware_price = 0;
  double power_kw = 0;
  double years = 3;
  double cloud_hourly = 0;
  double utilisation = 0.5;           // fraction of the hours the machine does useful work
  double kwh_price = 0.12;            // $/kWh
  double pue = 1.5;                   // facility power / IT power
  double maintenance_per_year = 0.0;  // fraction of the hardware price, per year
};
struct NUBO_API OwnResult {
  double break_even_utilisation = 0;    // above it owning is cheaper; > 1: renting always is
  double own_cost = 0, cloud_cost = 0;  // over the years, at the request's utilisation
  double cloud_saving = 0;              // 1 - cloud / own (negative: owning saves)
  double utilisation_for_saving(double saving) const;  // where renting saves this fraction
  double fixed = 0, energy_per_hour = 0, cloud_hourly = 0, hours = 0;
};
NUBO_API OwnResult rent_vs_own(const OwnRequest& request);

// ---- Scaling on one host's cores ----------------------------------------------------------

// A run of a profile measured with host (CPU) workers, predicted for another number of workers
// on the same host. Workers of a host share its cores: nubo gives each cores / workers GEMM
// threads, so the GEMMs a profile ran on all the cores gain nothing from more workers, while
// the rest of a step (elementwise kernels, the optimizer: one thread per worker) divides among
// them. docs/cost.md, "Scaling on a host", has the model.
struct HostScaleRequest {
  int workers = 1;        // in all, on the host
  int processes = 1;      // they run in (the link between processes is shared memory)
  int cpus = 0;           // the host's; 0: the profile's host_cpus
  double link_gbps = 10;  // all-reduce bus bandwidth among the workers, GB/s
};
struct HostScale {
  int threads_per_worker = 1;
  double compute_s = 0, gemm_s = 0, communication_s = 0;  // per step
  double step_s = 0, samples_per_s = 0;
  double run_s = 0;  // the profile's measured steps at this speed
};
// Error(invalid_argument) for a profile without the host fields (a GPU's, or one written
// before nubo-train measured them), or a request that makes no sense.
NUBO_API HostScale scale_on_host(const Profile& profile, const HostScaleRequest& request);

// Scaling efficiency of n workers: t1 / (n x tn). A claim of 8 V100s doing in 8 hours what took
// 3 days gives 72 / (8 x 8) = 1.125: more than linear, so not data parallelism alone.
NUBO_API double scaling_efficiency(double t1_s, double tn_s, int n);

// Sum of total_cost() by the value of tag `key`; estimates without it count under "".
NUBO_API std::map<std::string, double> totals_by_tag(const std::vector<Estimate>& estimates,
                                                     std::string_view key);

// ---- The live meter -----------------------------------------------------------------------

// Money so far and the projected total of a running job, from the hourly price and progress.
class NUBO_API CostMeter {
 public:
  CostMeter(double hourly, double fixed = 0);
  static CostMeter for_instance(const Catalog& catalog, std::string_view instance, Pricing pricing,
                                int nodes = 1);
  // elapsed_s since the job started; progress in [0, 1].
  void update(double elapsed_s, double progress);
  double spent() const;      // fixed + hourly x elapsed
  double projected() const;  // spent / progress; the spent amount until progress > 0
  double hourly() const { return hourly_; }
  // The price in force when the meter was made from a catalog row: its date and source, so a
  // report of the run prices it at what it cost then ("" for a meter made from a bare price).
  const std::string& price_date() const { return price_date_; }
  const std::string& price_source() const { return price_source_; }
  // "$12.34 spent, ~$56.78 projected"
  std::string line() const;

 private:
  double hourly_, fixed_, elapsed_s_ = 0, progress_ = 0;
  std::string price_date_, price_source_;
};

// ---- Units --------------------------------------------------------------------------------

// Sizes and durations: nubo/units.hpp (one reading for every tool).
NUBO_API std::string format_money(double dollars);  // "$1,234.56", "$0.53"

}  // namespace nubo::cost
