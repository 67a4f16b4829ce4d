/*
 * nubo_cost.h: the cost capability of nubo's C ABI (included by nubo.h; docs/cost.md).
 *
 * Load instance catalogs, describe a workload (analytic FLOPs or a nubo-train profile), plan it
 * over instance x node count x pricing, and read the estimates with their time and cost
 * breakdowns, the Pareto frontier and every exclusion. Also: the Young/Daly checkpoint interval,
 * rent or own, and a live cost meter.
 *
 * Conventions as in nubo.h (docs/abi.md): statuses, nubo_last_error(), sized structs with
 * *_init(ptr, sizeof *ptr), opaque handles whose *_free accepts NULL, caller-owned buffers with
 * the needed-size protocol. Strings in info structs belong to the handle they came from.
 */
#ifndef NUBO_COST_H
#define NUBO_COST_H

#include "nubo.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How an instance is paid for (C++: nubo::cost::Pricing). */
typedef enum nubo_cost_pricing {
  NUBO_PRICING_ON_DEMAND = 0,
  NUBO_PRICING_SPOT = 1,
  NUBO_PRICING_RESERVED_1Y = 2,
  NUBO_PRICING_RESERVED_3Y = 3,
  /* not a value: keeps every int a valid nubo_cost_pricing in C++ */
  NUBO_PRICING_MAX_ENUM = 0x7fffffff
} nubo_cost_pricing;

/* The optimizer whose states a model-described workload keeps (C++: nubo::cost::Optimizer). */
typedef enum nubo_cost_optimizer {
  NUBO_OPTIMIZER_ADAM = 0, /* Adam(W): two fp32 states per parameter */
  NUBO_OPTIMIZER_SGD = 1,  /* SGD with momentum: one */
  NUBO_OPTIMIZER_MAX_ENUM = 0x7fffffff
} nubo_cost_optimizer;

/* ---- Catalogs ---------------------------------------------------------------------------- */

typedef struct nubo_cost_catalog nubo_cost_catalog;

/* The embedded catalogs (instances with prices, storage and network prices): the snapshot of
   the public sources nubo ships, as it is. */
NUBO_C_API nubo_status nubo_cost_catalog_builtin(nubo_cost_catalog** out);
/* The snapshot as refreshed by `nubo-cost catalog update` (nubo_cost_catalog_update) and
   SkyPilot's local catalogs: each source's newest version. cache_dir NULL: the default
   ($XDG_CACHE_HOME/nubo/catalog). It never fetches anything itself. */
NUBO_C_API nubo_status nubo_cost_catalog_current(const char* cache_dir, nubo_cost_catalog** out);
/*
 * Adds the rows of a file in a public format: "skypilot", "gpuhunt", "spot-advisor",
 * "aws-price-list", "azure-retail"; provider names what it prices ("aws"). Lenient: a row that
 * fails a check is skipped and listed by nubo_cost_catalog_source. A file that is not that
 * format at all is NUBO_ERR_INVALID_ARGUMENT naming what is missing; the catalog is unchanged.
 */
NUBO_C_API nubo_status nubo_cost_catalog_import(nubo_cost_catalog* catalog, const char* path,
                                                const char* format, const char* provider);
/*
 * Adds the rows of a CSV or JSON catalog file (rows with an existing key replace it); replace
 * nonzero replaces the instance list. A malformed or implausible row is
 * NUBO_ERR_INVALID_ARGUMENT naming the file, the line and the reason; a missing file
 * NUBO_ERR_NOT_FOUND. On error the catalog is unchanged.
 */
NUBO_C_API nubo_status nubo_cost_catalog_load(nubo_cost_catalog* catalog, const char* path,
                                              int replace);
/* Discounts (fractions in [0, 1)) that derive reserved prices where none is published. */
NUBO_C_API nubo_status nubo_cost_catalog_set_reserved_discounts(nubo_cost_catalog* catalog,
                                                                double one_year, double three_year);
NUBO_C_API void nubo_cost_catalog_free(nubo_cost_catalog* catalog);
/* Number of instance rows; 0 for NULL. */
NUBO_C_API size_t nubo_cost_catalog_instance_count(const nubo_cost_catalog* catalog);

/* A catalog row: hardware, and prices per hour (C++: nubo::cost::Instance). */
typedef struct nubo_cost_instance_info {
  uint32_t struct_size;
  const char* provider;
  const char* name;
  const char* region;
  const char* gpu_model;
  int gpus;
  /* "none", "pcie", "nvlink", "nvswitch" (C++: nubo::cost::interconnect_name(in.interconnect)) */
  const char* interconnect;
  int vcpus;
  double memory_gib;
  double network_gbps;
  double on_demand;   /* $/h */
  double spot;        /* $/h, the median of its zones' quotes; < 0: none (not in the catalog) */
  double reserved_1y; /* $/h; <= 0: none */
  double reserved_3y; /* $/h; <= 0: none */
  int reserved_1y_derived; /* nonzero: derived from the discount, not published */
  int reserved_3y_derived; /* nonzero: derived from the discount, not published */
  double gpu_link_gbs;     /* per-GPU all-reduce bandwidth, GB/s per direction */
  const char* price_date;
  const char* spot_date;
  const char* source;
  double spot_lowest;            /* $/h, the cheapest zone's quote; < 0: none */
  int spot_quotes;               /* zones behind spot */
  const char* interruption_band; /* the provider's published band ("<5%"); "" none */
  double spot_mtbi_h;            /* read from the band; 0: the provider's default */
} nubo_cost_instance_info;

NUBO_C_API nubo_status nubo_cost_catalog_instance(const nubo_cost_catalog* catalog, size_t index,
                                                  nubo_cost_instance_info* out);

/* Where catalog rows came from, and what was skipped (C++: nubo::cost::CatalogSource). */
typedef struct nubo_cost_source_info {
  uint32_t struct_size;
  const char* name;     /* "skypilot-aws" */
  const char* format;   /* "skypilot", ... */
  const char* provider; /* "aws" */
  const char* url;      /* where an update fetches it */
  const char* origin;   /* "embedded", a cache file, SkyPilot's file, a user's file */
  const char* fetched;  /* "2026-12-03T10:00:00Z" */
  const char* etag;
  size_t rows;           /* rows, reserved prices or bands it gave */
  size_t records;        /* records read */
  size_t skipped_count;  /* (C++: skipped.size()) */
  const char* skipped;   /* "where: reason", one per line */
  double age_days;       /* since fetched; < 0 when unknown (C++: age_days()) */
  const char* corrected; /* rows kept with a known fact in place of the source's, one per line */
} nubo_cost_source_info;

NUBO_C_API size_t nubo_cost_catalog_source_count(const nubo_cost_catalog* catalog);
NUBO_C_API nubo_status nubo_cost_catalog_source(const nubo_cost_catalog* catalog, size_t index,
                                                nubo_cost_source_info* out);

/* ---- Refreshing the catalog -------------------------------------------------------------- */

typedef struct nubo_cost_update_options {
  uint32_t struct_size;
  const char* cache_dir;  /* NULL: the default */
  const char* sources;    /* names separated by spaces; NULL: every known source */
  const char* urls;       /* "NAME=URL" entries separated by spaces; NULL: the known URLs (or
                             NUBO_CATALOG_URL_<NAME>) */
  double timeout_s;       /* connecting and the longest stall; default 30 */
  double total_timeout_s; /* one source at most; default 600 */
  double max_skipped;     /* a new version skipping more of its records is refused; 0.5 */
} nubo_cost_update_options;

NUBO_C_API nubo_status nubo_cost_update_options_init(nubo_cost_update_options* options,
                                                     size_t struct_size);

typedef struct nubo_cost_update nubo_cost_update;

/*
 * Fetches each source into the cache (`nubo-cost catalog update`). A source whose new version
 * fails keeps its last good one; the answer says so per source. Only bad options are an error.
 */
NUBO_C_API nubo_status nubo_cost_catalog_update(const nubo_cost_update_options* options,
                                                nubo_cost_update** out);
NUBO_C_API size_t nubo_cost_update_count(const nubo_cost_update* update);

/* One source's outcome of an update (C++: nubo::cost::CatalogUpdate). */
typedef struct nubo_cost_update_info {
  uint32_t struct_size;
  const char* name;
  const char* url;
  /* "updated", "not modified", "failed" (C++: nubo::cost::update_status_name(in.status)) */
  const char* status;
  const char* message; /* why it failed, and which version stays */
  size_t records;
  size_t skipped;
  const char* fetched; /* the cached version's fetch time after the update; "" when none */
} nubo_cost_update_info;

NUBO_C_API nubo_status nubo_cost_update_entry(const nubo_cost_update* update, size_t index,
                                              nubo_cost_update_info* out);
NUBO_C_API void nubo_cost_update_free(nubo_cost_update* update);

/* Whether a GPU model is one a filter names ("H200" matches H200-SXM-141GB, not GH200-96GB);
   1 or 0; 0 for a NULL model, 1 for a NULL or empty filter. */
NUBO_C_API int nubo_cost_gpu_model_matches(const char* model, const char* filter);

/* ---- The workload ------------------------------------------------------------------------ */

typedef struct nubo_cost_workload {
  uint32_t struct_size;
  /* Analytic: total_flops, or flops_per_sample x samples x epochs. */
  double total_flops;
  double flops_per_sample;
  double samples; /* per epoch */
  double epochs;  /* default 1 */
  double global_batch;
  nubo_dtype dtype; /* default BF16 */
  double mfu;       /* 0 (default): calibrated by GPU and model size, else 0.4 (docs/cost.md) */
  /* Measured: a nubo-train profile (docs/profile.schema.json), by path or as text; it replaces
     the analytic fields (epochs still counts passes over its dataset). */
  const char* profile_path;
  const char* profile_json;
  /* Both. */
  double parameter_bytes; /* gradient bytes all-reduced per step (analytic) */
  double memory_per_gpu_bytes;
  double dataset_bytes;
  double compression_ratio; /* default 1 */
  double checkpoint_bytes;
  double checkpoint_write_mbps; /* 0: the provider's block storage throughput */
  double checkpoint_interval_s; /* on-demand and reserved; 0: hourly */
  double
      overlap; /* fraction of communication hidden behind compute; -1 (default): behind backward */
  double egress_bytes;
  double storage_months_after;
  const char* tags; /* "team=vision,project=a"; NULL: none */
  /* Described by its model: parameters with tokens give the FLOPs (6 N D), the GPU memory per
     worker and the gradient bytes of a step (docs/cost.md, "Workloads by model"). */
  double parameters;
  double tokens;
  double sequence_length; /* tokens per sample; 0: 2048 (activations and the step count) */
  double micro_batch;     /* samples per GPU per pass; default 1 */
  nubo_cost_optimizer optimizer;
  int sharding; /* ZeRO stage 0 to 3; -1 (default): the least that fits */
} nubo_cost_workload;

NUBO_C_API nubo_status nubo_cost_workload_init(nubo_cost_workload* workload, size_t struct_size);

/* ---- Planning ---------------------------------------------------------------------------- */

typedef struct nubo_cost_plan_options {
  uint32_t struct_size;
  unsigned pricings;      /* bits 1 << nubo_cost_pricing; default: on-demand only */
  int min_nodes;          /* default 1 */
  int max_nodes;          /* default 1 */
  double deadline_s;      /* 0: none */
  double budget;          /* $; 0: none */
  const char* gpu;        /* substring of the GPU model; NULL: all */
  const char* provider;   /* NULL: all */
  const char* region;     /* NULL: all */
  int rank_by_time;       /* nonzero: fastest first; default cheapest first */
  size_t limit;           /* ranked plans kept; default 10; 0: all */
  double spot_mtbi_s;     /* 0: the provider's default */
  double restart_s;       /* < 0 (default): the provider's default */
  double comm_efficiency; /* achieved / peak link bandwidth, default 1 */
  /* A preflight report (nubo-smi check --out): the GPU models it checked are priced at the
     rates it measured when below what the model should do. NULL (default): none. */
  const char* preflight_file;
} nubo_cost_plan_options;

NUBO_C_API nubo_status nubo_cost_plan_options_init(nubo_cost_plan_options* options,
                                                   size_t struct_size);

typedef struct nubo_cost_plan nubo_cost_plan;

/*
 * Plans the workload (NULL options: the defaults). A malformed workload, profile or option is
 * NUBO_ERR_INVALID_ARGUMENT. No feasible plan is not an error: the plan has 0 ranked estimates
 * and its exclusions say why.
 */
NUBO_C_API nubo_status nubo_cost_plan_create(const nubo_cost_catalog* catalog,
                                             const nubo_cost_workload* workload,
                                             const nubo_cost_plan_options* options,
                                             nubo_cost_plan** out);
/*
 * One option, fully broken down, as a plan with exactly one ranked estimate (and no
 * exclusions), whether or not it meets the options' deadline or budget. region may be NULL.
 * An unknown instance is NUBO_ERR_NOT_FOUND; a pricing without a price NUBO_ERR_UNAVAILABLE; a
 * dtype the GPU lacks, or several nodes without a network, NUBO_ERR_UNSUPPORTED.
 */
NUBO_C_API nubo_status nubo_cost_estimate(const nubo_cost_catalog* catalog,
                                          const nubo_cost_workload* workload, const char* instance,
                                          const char* region, int nodes, nubo_cost_pricing pricing,
                                          const nubo_cost_plan_options* options,
                                          nubo_cost_plan** out);
NUBO_C_API void nubo_cost_plan_free(nubo_cost_plan* plan);

/* Options considered and feasible (either pointer may be NULL). */
NUBO_C_API nubo_status nubo_cost_plan_counts(const nubo_cost_plan* plan, size_t* considered,
                                             size_t* feasible);
NUBO_C_API size_t nubo_cost_plan_ranked_count(const nubo_cost_plan* plan);
NUBO_C_API size_t nubo_cost_plan_frontier_count(const nubo_cost_plan* plan);
NUBO_C_API size_t nubo_cost_plan_exclusion_count(const nubo_cost_plan* plan);

/* One option, its time and cost each broken down (C++: nubo::cost::Estimate). */
typedef struct nubo_cost_estimate_info {
  uint32_t struct_size;
  const char* label; /* "p4d.24xlarge x2 spot" (C++: label()) */
  const char* provider;
  const char* instance;
  const char* region;
  const char* gpu_model;
  int gpus_per_node;
  int nodes;
  nubo_cost_pricing pricing;
  double hourly;     /* $/h, all nodes */
  int price_derived; /* nonzero: a reserved price derived from the discount, not published */
  /* Time, seconds: total = the sum of the parts. */
  double compute_s;       /* (C++: time.compute_s) */
  double communication_s; /* (C++: time.communication_s) */
  double staging_s;       /* (C++: time.staging_s) */
  double checkpoint_s;    /* writing checkpoints (C++: time.checkpoint_s) */
  double rework_s;        /* work redone after interruptions (C++: time.rework_s) */
  double restart_s;       /* restarting after interruptions (C++: time.restart_s) */
  double total_s;         /* the sum of the parts above (C++: time.total_s()) */
  double steps;           /* (C++: time.steps) */
  double step_s;          /* compute + exposed communication of one step (C++: time.step_s) */
  /* Cost, $. */
  double cost_instances; /* instance hours x price x nodes (C++: cost.instances) */
  double cost_storage;   /* (C++: cost.storage) */
  double cost_egress;    /* (C++: cost.egress) */
  double cost_total;     /* (C++: cost.total()) */
  double checkpoint_interval_s;
  double expected_interruptions; /* spot: of the whole job (any node's stops it), over the run */
  double memory_needed_bytes;
  double memory_per_gpu_bytes;
  double reserved_break_even; /* reserved pricings: utilisation above which it pays */
  int pareto;                 /* nonzero: on the time/cost Pareto frontier */
  const char* notes;          /* the assumptions that apply, one per line */
  int sharding;               /* the ZeRO stage memory_needed_bytes assumes; -1: not modelled */
  /* The price in force, so a later report prices this work at what it cost then. */
  const char* price_date;
  const char* price_source;
  const char* interruption_band; /* spot: the published band used; "" the provider default */
  double spot_mtbi_s;            /* spot: one node's mean time between interruptions */
  const char* tags;              /* the workload's tags, key=value, one per line */
  /* every GPU of every node for the whole run, as training reports publish (C++: gpu_hours()) */
  double gpu_hours;
} nubo_cost_estimate_info;

/* Ranked estimates, best first; the frontier, fastest first. */
NUBO_C_API nubo_status nubo_cost_plan_ranked(const nubo_cost_plan* plan, size_t index,
                                             nubo_cost_estimate_info* out);
NUBO_C_API nubo_status nubo_cost_plan_frontier(const nubo_cost_plan* plan, size_t index,
                                               nubo_cost_estimate_info* out);

/* Options left out and why (C++: nubo::cost::Exclusion). */
typedef struct nubo_cost_exclusion_info {
  uint32_t struct_size;
  const char* subject; /* "p3.2xlarge x1-4 (on-demand)" */
  const char* reason;  /* "finishes in 31.0 h, past the 24.0 h deadline" */
  size_t options;      /* how many (instance, nodes, pricing) options this covers */
} nubo_cost_exclusion_info;

NUBO_C_API nubo_status nubo_cost_plan_exclusion(const nubo_cost_plan* plan, size_t index,
                                                nubo_cost_exclusion_info* out);
/* The plan as JSON (docs/cost.md), with the needed-size protocol of nubo_device_report_json. */
NUBO_C_API nubo_status nubo_cost_plan_json(const nubo_cost_plan* plan, char* buf, size_t capacity,
                                           size_t* needed);

/* ---- Serving (inference) ----------------------------------------------------------------- */

/* A model served for generation, docs/cost.md (C++: nubo::cost::InferenceWorkload). */
typedef struct nubo_cost_serving {
  uint32_t struct_size;
  double parameters;          /* 7e9 */
  nubo_dtype dtype;           /* of weights and KV cache; default BF16 */
  double bytes_per_parameter; /* the weights' storage; 0: the dtype's (1 for int8) */
  double tokens_per_s;        /* output tokens per second, all requests together */
  double requests_per_s;      /* or requests per second ... */
  double tokens_per_request;  /* ... each generating this many */
  double context_tokens;      /* prompt + output per sequence; default 4096 */
  double latency_s;           /* time per output token at most; 0: no limit */
  double kv_bytes_per_token;  /* 0: estimated for a dense transformer of this size */
  double memory_efficiency;   /* achieved fraction of peak memory bandwidth; default 0.8 */
} nubo_cost_serving;

NUBO_C_API nubo_status nubo_cost_serving_init(nubo_cost_serving* serving, size_t struct_size);

typedef struct nubo_cost_serving_plan nubo_cost_serving_plan;

/* The cheapest instances that serve the model at its rate within its latency; options' pricings,
   filters and limit apply. */
NUBO_C_API nubo_status nubo_cost_serving_plan_create(const nubo_cost_catalog* catalog,
                                                     const nubo_cost_serving* serving,
                                                     const nubo_cost_plan_options* options,
                                                     nubo_cost_serving_plan** out);
NUBO_C_API void nubo_cost_serving_plan_free(nubo_cost_serving_plan* plan);
NUBO_C_API size_t nubo_cost_serving_plan_count(const nubo_cost_serving_plan* plan);
NUBO_C_API size_t nubo_cost_serving_plan_exclusion_count(const nubo_cost_serving_plan* plan);

/* One way to serve the model (C++: nubo::cost::ServingOption). */
typedef struct nubo_cost_serving_info {
  uint32_t struct_size;
  const char* provider;
  const char* instance;
  const char* region;
  const char* gpu_model;
  int gpus_per_node;
  int instances; /* needed for the target rate */
  nubo_cost_pricing pricing;
  int gpus_per_replica;
  int replicas_per_instance;
  double batch;
  double token_latency_s;
  double tokens_per_s; /* per instance */
  double hourly;       /* $/h, all instances */
  double dollars_per_million_tokens;
  const char* price_date;
  const char* price_source;
} nubo_cost_serving_info;

NUBO_C_API nubo_status nubo_cost_serving_plan_option(const nubo_cost_serving_plan* plan,
                                                     size_t index, nubo_cost_serving_info* out);
NUBO_C_API nubo_status nubo_cost_serving_plan_exclusion(const nubo_cost_serving_plan* plan,
                                                        size_t index,
                                                        nubo_cost_exclusion_info* out);

/* ---- Tools ------------------------------------------------------------------------------- */

/* How often to checkpoint, and what it costs (C++: nubo::cost::CheckpointPlan). */
typedef struct nubo_cost_checkpoint_info {
  uint32_t struct_size;
  double young_interval_s; /* sqrt(2 delta M) */
  double daly_interval_s;  /* Daly's optimum, the one to use */
  double expected_wall_s;
  double write_s;
  double lost_work_s;
  double restart_s;
  double interruptions;
  double overhead_fraction; /* (C++: overhead_fraction()) */
} nubo_cost_checkpoint_info;

/* Young/Daly for work_s of work, write_s per checkpoint, mtbi_s between interruptions. */
NUBO_C_API nubo_status nubo_cost_checkpoint_plan(double work_s, double write_s, double mtbi_s,
                                                 double restart_s, nubo_cost_checkpoint_info* out);

/* Buying a machine against renting a comparable instance (C++: nubo::cost::OwnRequest). */
typedef struct nubo_cost_own_request {
  uint32_t struct_size;
  double hardware_price;
  double power_kw;
  double years;                /* default 3 */
  double cloud_hourly;         /* $/h of the comparable cloud instance */
  double utilisation;          /* default 0.5 */
  double kwh_price;            /* default 0.12 */
  double pue;                  /* default 1.5 */
  double maintenance_per_year; /* fraction of the price per year, default 0 */
} nubo_cost_own_request;

NUBO_C_API nubo_status nubo_cost_own_request_init(nubo_cost_own_request* request,
                                                  size_t struct_size);

/* Renting against owning (C++: nubo::cost::OwnResult). */
typedef struct nubo_cost_own_info {
  uint32_t struct_size;
  double break_even_utilisation; /* above it owning is cheaper; > 1 or inf: renting always is */
  double own_cost;
  double cloud_cost;
  double cloud_saving; /* 1 - cloud / own at the request's utilisation */
  /* the utilisation at which renting saves 70% (C++: utilisation_for_saving(0.7)) */
  double utilisation_for_70_percent_saving;
} nubo_cost_own_info;

NUBO_C_API nubo_status nubo_cost_rent_vs_own(const nubo_cost_own_request* request,
                                             nubo_cost_own_info* out);

/* ---- The live meter ---------------------------------------------------------------------- */

typedef struct nubo_cost_meter nubo_cost_meter;

NUBO_C_API nubo_status nubo_cost_meter_create(double hourly, double fixed, nubo_cost_meter** out);
/* The meter of `nodes` instances of a catalog row at a pricing. */
NUBO_C_API nubo_status nubo_cost_meter_for_instance(const nubo_cost_catalog* catalog,
                                                    const char* instance, nubo_cost_pricing pricing,
                                                    int nodes, nubo_cost_meter** out);
/* Records progress in [0, 1] after elapsed_s; spent and projected (either may be NULL) get $. */
NUBO_C_API nubo_status nubo_cost_meter_update(nubo_cost_meter* meter, double elapsed_s,
                                              double progress, double* spent, double* projected);
/* The meter's status line ("$12.34 spent, ~$56.78 projected"), NUL-terminated, with the
   needed-size protocol of nubo_device_report_json. */
NUBO_C_API nubo_status nubo_cost_meter_line(const nubo_cost_meter* meter, char* buf,
                                            size_t capacity, size_t* needed);

/* The price a meter runs at and where it came from (a meter made from a catalog row). */
typedef struct nubo_cost_meter_info {
  uint32_t struct_size;
  double hourly;
  const char* price_date; /* "" for a meter made from a bare price */
  const char* price_source;
} nubo_cost_meter_info;

NUBO_C_API nubo_status nubo_cost_meter_price(const nubo_cost_meter* meter,
                                             nubo_cost_meter_info* out);
NUBO_C_API void nubo_cost_meter_free(nubo_cost_meter* meter);

/* ---- A queue of jobs (docs/schedule.md) -------------------------------------------------- */

/* How a queue is scheduled (C++: nubo::cost::ScheduleMethod). */
typedef enum nubo_cost_schedule_method {
  NUBO_SCHEDULE_AUTO = 0, /* exact up to exact_up_to jobs, else the heuristic (C++: automatic) */
  NUBO_SCHEDULE_EXACT = 1,
  NUBO_SCHEDULE_HEURISTIC = 2,
  /* not a value: keeps every int a valid nubo_cost_schedule_method in C++ */
  NUBO_SCHEDULE_MAX_ENUM = 0x7fffffff
} nubo_cost_schedule_method;

typedef enum nubo_cost_placement {
  NUBO_PLACEMENT_RESERVED = 0,
  NUBO_PLACEMENT_ON_DEMAND = 1,
  NUBO_PLACEMENT_SPOT = 2,
  NUBO_PLACEMENT_UNPLACED = 3,
  /* not a value: keeps every int a valid nubo_cost_placement in C++ */
  NUBO_PLACEMENT_MAX_ENUM = 0x7fffffff
} nubo_cost_placement;

/* How a queue is planned (C++: nubo::cost::ScheduleOptions). */
typedef struct nubo_cost_schedule_options {
  uint32_t struct_size;
  nubo_cost_schedule_method method; /* default NUBO_SCHEDULE_AUTO */
  size_t exact_up_to;               /* default 300 */
  double time_limit_s;              /* the exact solver's; default 20 */
  double slot_h;                    /* the grid on reservations; 0 (default): from the horizon */
  double spot_mtbi_s;               /* 0 (default): the provider's (C++: request.spot_mtbi_s) */
  double restart_s;                 /* < 0 (default): the provider's (C++: request.restart_s) */
} nubo_cost_schedule_options;

NUBO_C_API nubo_status nubo_cost_schedule_options_init(nubo_cost_schedule_options* options,
                                                       size_t struct_size);

typedef struct nubo_cost_schedule nubo_cost_schedule;

/* Plans a queue: the JSON queue file at `queue_path`, or the JSON text `queue_json` when
 * queue_path is NULL (docs/schedule.md has the format). options may be NULL. Errors:
 * NUBO_ERR_INVALID_ARGUMENT naming the job or reservation and the field. */
NUBO_C_API nubo_status nubo_cost_schedule_create(const nubo_cost_catalog* catalog,
                                                 const char* queue_path, const char* queue_json,
                                                 const nubo_cost_schedule_options* options,
                                                 nubo_cost_schedule** out);
/* The rest of the queue re-planned from what happened since (`update_json`: "now", and jobs
 * finished, failed or running). */
NUBO_C_API nubo_status nubo_cost_schedule_update(const nubo_cost_catalog* catalog,
                                                 const nubo_cost_schedule* previous,
                                                 const char* update_json,
                                                 const nubo_cost_schedule_options* options,
                                                 nubo_cost_schedule** out);
/* What if: the queue planned again with one more reservation ("p4d.24xlarge=1:1y", as
 * --reserve). `saving`: total without minus total with. `out` may be NULL. */
NUBO_C_API nubo_status nubo_cost_schedule_what_if(const nubo_cost_catalog* catalog,
                                                  const nubo_cost_schedule* schedule,
                                                  const char* reservation,
                                                  const nubo_cost_schedule_options* options,
                                                  double* saving, nubo_cost_schedule** out);
NUBO_C_API void nubo_cost_schedule_free(nubo_cost_schedule* schedule);

typedef struct nubo_cost_schedule_summary {
  uint32_t struct_size;
  nubo_cost_schedule_method method; /* the one used: exact or heuristic */
  int optimal;                      /* proven optimal */
  double bound;                     /* $: no schedule of the queue costs less */
  double gap;                       /* (total - bound) / total */
  double solve_s;
  double slot_h, horizon_h;
  double committed_used, committed_idle, on_demand, spot, total; /* $ */
  size_t jobs, unplaced;
  size_t fleet_rows; /* nubo_cost_schedule_json has them */
} nubo_cost_schedule_summary;
NUBO_C_API nubo_status nubo_cost_schedule_get_summary(const nubo_cost_schedule* schedule,
                                                      nubo_cost_schedule_summary* out);

typedef struct nubo_cost_scheduled_job_info {
  uint32_t struct_size;
  const char* name;
  const char* tag;
  nubo_cost_placement placement;
  size_t reservation; /* reserved: which of the queue's reservations */
  double start_h, finish_h, deadline_h;
  double cost;        /* expected $ beyond what is committed */
  const char* reason; /* why it is not on its cheapest option; "" when it is */
} nubo_cost_scheduled_job_info;
/* Job `index` (the queue's order), and its estimate (not for an unplaced job). */
NUBO_C_API nubo_status nubo_cost_schedule_job(const nubo_cost_schedule* schedule, size_t index,
                                              nubo_cost_scheduled_job_info* out);
NUBO_C_API nubo_status nubo_cost_schedule_job_estimate(const nubo_cost_schedule* schedule,
                                                       size_t index, nubo_cost_estimate_info* out);
/* The whole schedule as JSON (docs/schedule.md), the fleet per slot included. */
NUBO_C_API nubo_status nubo_cost_schedule_json(const nubo_cost_schedule* schedule, char* buf,
                                               size_t capacity, size_t* needed);
/* Job files into `dir`: format "skypilot", "slurm" or "kubernetes"; a script starts them all, and
   a README.md says the order. */
NUBO_C_API nubo_status nubo_cost_schedule_write_job_files(const nubo_cost_catalog* catalog,
                                                          const nubo_cost_schedule* schedule,
                                                          const char* format, const char* dir);

#ifdef __cplusplus
}
#endif

#endif /* NUBO_COST_H */
