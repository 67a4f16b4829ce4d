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

typedef enum nubo_cost_pricing {
  NUBO_PRICING_ON_DEMAND = 0,
  NUBO_PRICING_SPOT = 1,
  NUBO_PRICING_RESERVED_1Y = 2,
  NUBO_PRICING_RESERVED_3Y = 3,
  /* not a value: keeps every int a valid nubo_cost_pricing in C++ */
  NUBO_PRICING_MAX_ENUM = 0x7fffffff
} nubo_cost_pricing;

/* ---- Catalogs ---------------------------------------------------------------------------- */

typedef struct nubo_cost_catalog nubo_cost_catalog;

/* The embedded catalogs (instances with prices, storage and network prices). */
NUBO_C_API nubo_status nubo_cost_catalog_builtin(nubo_cost_catalog** out);
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

typedef struct nubo_cost_instance_info {
  uint32_t struct_size;
  const char* provider;
  const char* name;
  const char* region;
  const char* gpu_model;
  int gpus;
  const char* interconnect; /* "none", "pcie", "nvlink", "nvswitch" */
  int vcpus;
  double memory_gib;
  double network_gbps;
  double on_demand; /* $/h */
  double spot;      /* $/h; < 0: not in the catalog */
  double reserved_1y;
  double reserved_3y;
  int reserved_1y_derived; /* nonzero: derived from the discount, not published */
  int reserved_3y_derived;
  double gpu_link_gbs; /* per-GPU all-reduce bandwidth, GB/s per direction */
  const char* price_date;
  const char* spot_date;
  const char* source;
} nubo_cost_instance_info;

NUBO_C_API nubo_status nubo_cost_catalog_instance(const nubo_cost_catalog* catalog, size_t index,
                                                  nubo_cost_instance_info* out);

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
  double mfu;       /* default 0.4 */
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
  double overlap;               /* fraction of communication hidden behind compute */
  double egress_bytes;
  double storage_months_after;
  const char* tags; /* "team=vision,project=a"; NULL: none */
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

typedef struct nubo_cost_estimate_info {
  uint32_t struct_size;
  const char* label; /* "p4d.24xlarge x2 spot" */
  const char* provider;
  const char* instance;
  const char* region;
  const char* gpu_model;
  int gpus_per_node;
  int nodes;
  nubo_cost_pricing pricing;
  double hourly; /* $/h, all nodes */
  int price_derived;
  /* Time, seconds: total = the sum of the parts. */
  double compute_s;
  double communication_s;
  double staging_s;
  double checkpoint_s;
  double rework_s;
  double restart_s;
  double total_s;
  double steps;
  double step_s;
  /* Cost, $. */
  double cost_instances;
  double cost_storage;
  double cost_egress;
  double cost_total;
  double checkpoint_interval_s;
  double expected_interruptions;
  double memory_needed_bytes;
  double memory_per_gpu_bytes;
  double reserved_break_even; /* reserved pricings: utilisation above which it pays */
  int pareto;
  const char* notes; /* the estimate's notes, one per line; "" when none */
} nubo_cost_estimate_info;

/* Ranked estimates, best first; the frontier, fastest first. */
NUBO_C_API nubo_status nubo_cost_plan_ranked(const nubo_cost_plan* plan, size_t index,
                                             nubo_cost_estimate_info* out);
NUBO_C_API nubo_status nubo_cost_plan_frontier(const nubo_cost_plan* plan, size_t index,
                                               nubo_cost_estimate_info* out);

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

/* ---- Tools ------------------------------------------------------------------------------- */

typedef struct nubo_cost_checkpoint_info {
  uint32_t struct_size;
  double young_interval_s; /* sqrt(2 delta M) */
  double daly_interval_s;  /* Daly's optimum, the one to use */
  double expected_wall_s;
  double write_s;
  double lost_work_s;
  double restart_s;
  double interruptions;
  double overhead_fraction;
} nubo_cost_checkpoint_info;

/* Young/Daly for work_s of work, write_s per checkpoint, mtbi_s between interruptions. */
NUBO_C_API nubo_status nubo_cost_checkpoint_plan(double work_s, double write_s, double mtbi_s,
                                                 double restart_s, nubo_cost_checkpoint_info* out);

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

typedef struct nubo_cost_own_info {
  uint32_t struct_size;
  double break_even_utilisation; /* above it owning is cheaper; > 1 or inf: renting always is */
  double own_cost;
  double cloud_cost;
  double cloud_saving;                      /* 1 - cloud / own at the request's utilisation */
  double utilisation_for_70_percent_saving; /* the utilisation at which renting saves 70% */
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
NUBO_C_API void nubo_cost_meter_free(nubo_cost_meter* meter);

#ifdef __cplusplus
}
#endif

#endif /* NUBO_COST_H */
