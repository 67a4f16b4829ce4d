/* The cost C ABI from a strict C11 program: catalogs, a plan, an estimate, the tools, the meter,
   and the bad inputs each entry point must answer with a status and a message. */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nubo.h"

static int failures = 0;

#define CHECK(cond)                                                                            \
  do {                                                                                         \
    if (!(cond)) {                                                                             \
      fprintf(stderr, "%s:%d: CHECK(%s) failed (last error: %s)\n", __FILE__, __LINE__, #cond, \
              nubo_last_error());                                                              \
      ++failures;                                                                              \
    }                                                                                          \
  } while (0)

static int contains(const char* haystack, const char* needle) {
  return haystack && strstr(haystack, needle) != NULL;
}

/* The fixed catalog of tests/data: figures that do not move when the snapshot is refreshed. */
static nubo_cost_catalog* fixed_catalog(void) {
  nubo_cost_catalog* catalog = NULL;
  CHECK(nubo_cost_catalog_builtin(&catalog) == NUBO_OK);
  CHECK(nubo_cost_catalog_load(catalog, NUBO_TEST_DATA_DIR "/fixed_instances.csv", 1) == NUBO_OK);
  return catalog;
}

static void test_catalog(void) {
  nubo_cost_catalog* builtin = NULL;
  CHECK(nubo_cost_catalog_builtin(&builtin) == NUBO_OK);
  CHECK(nubo_cost_catalog_instance_count(builtin) >= 400);
  nubo_cost_catalog_free(builtin);
  nubo_cost_catalog* catalog = fixed_catalog();
  CHECK(nubo_cost_catalog_instance_count(catalog) == 16);
  int found = 0;
  for (size_t i = 0; i < nubo_cost_catalog_instance_count(catalog); ++i) {
    nubo_cost_instance_info info;
    info.struct_size = sizeof info;
    CHECK(nubo_cost_catalog_instance(catalog, i, &info) == NUBO_OK);
    if (strcmp(info.name, "p4d.24xlarge") == 0) {
      found = 1;
      CHECK(info.gpus == 8);
      CHECK(strcmp(info.gpu_model, "A100-SXM4-40GB") == 0);
      CHECK(strcmp(info.interconnect, "nvswitch") == 0);
      CHECK(fabs(info.on_demand - 32.77) < 1e-9);
      CHECK(info.reserved_1y_derived);
      CHECK(strlen(info.source) > 0);
    }
  }
  CHECK(found);
  nubo_cost_instance_info info;
  info.struct_size = sizeof info;
  CHECK(nubo_cost_catalog_instance(catalog, 100000, &info) == NUBO_ERR_INVALID_ARGUMENT);
  CHECK(contains(nubo_last_error(), "out of range"));
  info.struct_size = 0;
  CHECK(nubo_cost_catalog_instance(catalog, 0, &info) == NUBO_ERR_INVALID_ARGUMENT);
  CHECK(nubo_cost_catalog_load(catalog, "/nonexistent.csv", 0) == NUBO_ERR_NOT_FOUND);
  CHECK(nubo_cost_catalog_load(catalog, NULL, 0) == NUBO_ERR_INVALID_ARGUMENT);
  CHECK(contains(nubo_last_error(), "path is NULL"));
  CHECK(nubo_cost_catalog_set_reserved_discounts(catalog, 0.5, 0.75) == NUBO_OK);
  CHECK(nubo_cost_catalog_set_reserved_discounts(catalog, 1.5, 0.75) == NUBO_ERR_INVALID_ARGUMENT);
  CHECK(nubo_cost_catalog_builtin(NULL) == NUBO_ERR_INVALID_ARGUMENT);
  CHECK(nubo_cost_catalog_instance_count(NULL) == 0);
  nubo_cost_catalog_free(catalog);
  nubo_cost_catalog_free(NULL);
}

static void test_plan(void) {
  nubo_cost_catalog* catalog = fixed_catalog();
  nubo_cost_workload w;
  CHECK(nubo_cost_workload_init(&w, sizeof w) == NUBO_OK);
  CHECK(w.epochs == 1 && w.mfu == 0 && w.dtype == NUBO_DTYPE_BF16);
  w.total_flops = 3e18;
  w.checkpoint_bytes = 20e9;
  w.tags = "team=vision,project=a";
  nubo_cost_plan_options o;
  CHECK(nubo_cost_plan_options_init(&o, sizeof o) == NUBO_OK);
  o.pricings = (1u << NUBO_PRICING_ON_DEMAND) | (1u << NUBO_PRICING_SPOT);
  o.max_nodes = 4;
  o.deadline_s = 24 * 3600;
  nubo_cost_plan* plan = NULL;
  CHECK(nubo_cost_plan_create(catalog, &w, &o, &plan) == NUBO_OK);
  size_t considered = 0, feasible = 0;
  CHECK(nubo_cost_plan_counts(plan, &considered, &feasible) == NUBO_OK);
  CHECK(considered > feasible && feasible > 0);
  CHECK(nubo_cost_plan_ranked_count(plan) == 10);
  CHECK(nubo_cost_plan_frontier_count(plan) > 0);
  CHECK(nubo_cost_plan_exclusion_count(plan) > 0);
  double previous = 0;
  for (size_t i = 0; i < nubo_cost_plan_ranked_count(plan); ++i) {
    nubo_cost_estimate_info e;
    e.struct_size = sizeof e;
    CHECK(nubo_cost_plan_ranked(plan, i, &e) == NUBO_OK);
    CHECK(e.cost_total >= previous);
    previous = e.cost_total;
    CHECK(fabs(e.total_s - (e.compute_s + e.communication_s + e.staging_s + e.checkpoint_s +
                            e.rework_s + e.restart_s)) < 1e-6 * e.total_s);
    CHECK(e.total_s <= 24 * 3600);
    CHECK(strlen(e.label) > 0);
  }
  nubo_cost_exclusion_info x;
  x.struct_size = sizeof x;
  CHECK(nubo_cost_plan_exclusion(plan, 0, &x) == NUBO_OK);
  CHECK(strlen(x.subject) > 0 && strlen(x.reason) > 0 && x.options > 0);
  size_t needed = 0;
  CHECK(nubo_cost_plan_json(plan, NULL, 0, &needed) == NUBO_ERR_INVALID_ARGUMENT);
  CHECK(needed > 100);
  char* json = malloc(needed);
  CHECK(nubo_cost_plan_json(plan, json, needed, &needed) == NUBO_OK);
  CHECK(contains(json, "\"frontier\"") && contains(json, "\"team\": \"vision\""));
  free(json);
  nubo_cost_estimate_info e;
  e.struct_size = sizeof e;
  CHECK(nubo_cost_plan_ranked(plan, 99, &e) == NUBO_ERR_INVALID_ARGUMENT);
  nubo_cost_plan_free(plan);
  nubo_cost_plan_free(NULL);

  /* One estimate, and what it refuses. */
  CHECK(nubo_cost_estimate(catalog, &w, "p4d.24xlarge", NULL, 2, NUBO_PRICING_SPOT, NULL, &plan) ==
        NUBO_OK);
  CHECK(nubo_cost_plan_ranked_count(plan) == 1);
  CHECK(nubo_cost_plan_ranked(plan, 0, &e) == NUBO_OK);
  CHECK(e.nodes == 2 && e.pricing == NUBO_PRICING_SPOT && e.rework_s > 0);
  CHECK(e.checkpoint_interval_s > 0 && e.expected_interruptions > 0);
  nubo_cost_plan_free(plan);
  CHECK(nubo_cost_estimate(catalog, &w, "nope.xlarge", NULL, 1, NUBO_PRICING_ON_DEMAND, NULL,
                           &plan) == NUBO_ERR_NOT_FOUND);
  CHECK(plan == NULL);
  CHECK(nubo_cost_estimate(catalog, &w, "p3.2xlarge", NULL, 1, NUBO_PRICING_SPOT, NULL, &plan) ==
        NUBO_ERR_UNAVAILABLE);
  CHECK(nubo_cost_estimate(catalog, &w, "p3.8xlarge", NULL, 1, NUBO_PRICING_ON_DEMAND, NULL,
                           &plan) == NUBO_ERR_UNSUPPORTED); /* V100 has no bf16 */
  CHECK(nubo_cost_estimate(catalog, &w, "p4d.24xlarge", NULL, 1, (nubo_cost_pricing)9, NULL,
                           &plan) == NUBO_ERR_INVALID_ARGUMENT);

  /* Bad inputs. */
  nubo_cost_workload bad = w;
  bad.mfu = 2;
  CHECK(nubo_cost_plan_create(catalog, &bad, NULL, &plan) == NUBO_ERR_INVALID_ARGUMENT);
  CHECK(contains(nubo_last_error(), "mfu"));
  bad = w;
  bad.tags = "novalue";
  CHECK(nubo_cost_plan_create(catalog, &bad, NULL, &plan) == NUBO_ERR_INVALID_ARGUMENT);
  CHECK(contains(nubo_last_error(), "KEY=VALUE"));
  bad = w;
  bad.struct_size = 0;
  CHECK(nubo_cost_plan_create(catalog, &bad, NULL, &plan) == NUBO_ERR_INVALID_ARGUMENT);
  CHECK(contains(nubo_last_error(), "nubo_cost_workload_init"));
  o.pricings = 0;
  CHECK(nubo_cost_plan_create(catalog, &w, &o, &plan) == NUBO_ERR_INVALID_ARGUMENT);
  CHECK(nubo_cost_plan_create(NULL, &w, NULL, &plan) == NUBO_ERR_INVALID_ARGUMENT);
  CHECK(nubo_cost_plan_create(catalog, NULL, NULL, &plan) == NUBO_ERR_INVALID_ARGUMENT);

  /* A measured workload from the sample profile. */
  nubo_cost_workload m;
  CHECK(nubo_cost_workload_init(&m, sizeof m) == NUBO_OK);
  m.profile_path = NUBO_TEST_DATA_DIR "/sample_profile.json";
  m.epochs = 10;
  CHECK(nubo_cost_estimate(catalog, &m, "g4dn.xlarge", NULL, 1, NUBO_PRICING_ON_DEMAND, NULL,
                           &plan) == NUBO_OK);
  CHECK(nubo_cost_plan_ranked(plan, 0, &e) == NUBO_OK);
  CHECK(fabs(e.compute_s - 72 / 8.1) < 1e-6); /* 0.012 s x 6000 steps x 1 TFLOP/s / 8.1 */
  nubo_cost_plan_free(plan);
  m.profile_path = NUBO_TEST_DATA_DIR "/missing_profile.json";
  CHECK(nubo_cost_plan_create(catalog, &m, NULL, &plan) == NUBO_ERR_NOT_FOUND);
  nubo_cost_catalog_free(catalog);
}

static void test_tools(void) {
  nubo_cost_checkpoint_info cp;
  cp.struct_size = sizeof cp;
  CHECK(nubo_cost_checkpoint_plan(360000, 60, 21600, 600, &cp) == NUBO_OK);
  CHECK(fabs(cp.young_interval_s - 1609.968944) < 1e-3);
  CHECK(fabs(cp.daly_interval_s - 1570.22) < 0.05);
  CHECK(cp.overhead_fraction > 0.1 && cp.overhead_fraction < 0.2);
  CHECK(nubo_cost_checkpoint_plan(360000, 60, 0, 600, &cp) == NUBO_ERR_INVALID_ARGUMENT);

  nubo_cost_own_request r;
  CHECK(nubo_cost_own_request_init(&r, sizeof r) == NUBO_OK);
  r.hardware_price = 250000;
  r.power_kw = 6.5;
  r.cloud_hourly = 32.77;
  nubo_cost_own_info own;
  own.struct_size = sizeof own;
  CHECK(nubo_cost_rent_vs_own(&r, &own) == NUBO_OK);
  CHECK(fabs(own.break_even_utilisation - 250000 / (26280 * (32.77 - 1.17))) < 1e-9);
  CHECK(own.utilisation_for_70_percent_saving > 0.08 &&
        own.utilisation_for_70_percent_saving < 0.09);
  r.hardware_price = -1;
  CHECK(nubo_cost_rent_vs_own(&r, &own) == NUBO_ERR_INVALID_ARGUMENT);

  nubo_cost_meter* meter = NULL;
  CHECK(nubo_cost_meter_create(32.77, 0, &meter) == NUBO_OK);
  double spent = 0, projected = 0;
  CHECK(nubo_cost_meter_update(meter, 1800, 0.25, &spent, &projected) == NUBO_OK);
  CHECK(fabs(spent - 16.385) < 1e-9 && fabs(projected - 65.54) < 1e-9);
  CHECK(nubo_cost_meter_update(meter, 1800, 1.5, NULL, NULL) == NUBO_ERR_INVALID_ARGUMENT);
  char line[64];
  size_t needed = 0;
  CHECK(nubo_cost_meter_line(meter, NULL, 0, &needed) == NUBO_ERR_INVALID_ARGUMENT);
  CHECK(needed == strlen("$16.39 spent, ~$65.54 projected") + 1);
  CHECK(nubo_cost_meter_line(meter, line, sizeof line, &needed) == NUBO_OK);
  CHECK(strcmp(line, "$16.39 spent, ~$65.54 projected") == 0);
  CHECK(nubo_cost_meter_line(meter, line, 4, NULL) == NUBO_ERR_INVALID_ARGUMENT && line[0] == 0);
  CHECK(nubo_cost_meter_line(NULL, line, sizeof line, NULL) == NUBO_ERR_INVALID_ARGUMENT);
  nubo_cost_meter_free(meter);
  nubo_cost_catalog* catalog = fixed_catalog();
  CHECK(nubo_cost_meter_for_instance(catalog, "p5.48xlarge", NUBO_PRICING_ON_DEMAND, 2, &meter) ==
        NUBO_OK);
  CHECK(nubo_cost_meter_update(meter, 3600, 0.5, &spent, &projected) == NUBO_OK);
  CHECK(fabs(spent - 196.64) < 1e-9 && fabs(projected - 393.28) < 1e-9);
  nubo_cost_meter_info price;
  price.struct_size = sizeof price;
  CHECK(nubo_cost_meter_price(meter, &price) == NUBO_OK);
  CHECK(strcmp(price.price_date, "2026-11") == 0 &&
        contains(price.price_source, "fixed_instances"));
  nubo_cost_meter_free(meter);
  CHECK(nubo_cost_meter_for_instance(catalog, "p3.2xlarge", NUBO_PRICING_SPOT, 1, &meter) ==
        NUBO_ERR_UNAVAILABLE);
  CHECK(nubo_cost_meter_update(NULL, 1, 0.5, NULL, NULL) == NUBO_ERR_INVALID_ARGUMENT);
  nubo_cost_meter_free(NULL);
  nubo_cost_catalog_free(catalog);
}

/* Public sources: import, what was skipped, the snapshot's sources, an update that fails. */
static void test_sources(void) {
  nubo_cost_catalog* catalog = fixed_catalog();
  CHECK(nubo_cost_catalog_import(catalog, NUBO_COST_FIXTURES "/skypilot_malformed.csv", "skypilot",
                                 "aws") == NUBO_OK);
  size_t n = nubo_cost_catalog_source_count(catalog);
  CHECK(n >= 1);
  nubo_cost_source_info s;
  s.struct_size = sizeof s;
  CHECK(nubo_cost_catalog_source(catalog, n - 1, &s) == NUBO_OK);
  CHECK(strcmp(s.format, "skypilot") == 0 && s.records == 10 && s.skipped_count == 9);
  CHECK(contains(s.skipped, "skypilot_malformed.csv:6") && contains(s.skipped, "duplicates"));
  CHECK(nubo_cost_catalog_import(catalog, NUBO_COST_FIXTURES "/skypilot_no_price.csv", "skypilot",
                                 "aws") == NUBO_ERR_INVALID_ARGUMENT);
  CHECK(contains(nubo_last_error(), "missing column 'Price'"));
  CHECK(nubo_cost_catalog_import(catalog, "x.csv", "mine", "aws") == NUBO_ERR_INVALID_ARGUMENT);
  CHECK(contains(nubo_last_error(), "unknown catalog format 'mine'"));
  CHECK(nubo_cost_catalog_source(catalog, 9999, &s) == NUBO_ERR_INVALID_ARGUMENT);
  int banded = 0;
  for (size_t i = 0; i < nubo_cost_catalog_instance_count(catalog); ++i) {
    nubo_cost_instance_info info;
    info.struct_size = sizeof info;
    CHECK(nubo_cost_catalog_instance(catalog, i, &info) == NUBO_OK);
    banded += info.interruption_band[0] != 0;
  }
  CHECK(banded == 0); /* the fixed catalog has no published bands */
  nubo_cost_catalog_free(catalog);

  CHECK(nubo_cost_gpu_model_matches("H200-SXM-141GB", "H200") == 1);
  CHECK(nubo_cost_gpu_model_matches("GH200-96GB", "H200") == 0);
  CHECK(nubo_cost_gpu_model_matches(NULL, "H200") == 0);
  double count = 0;
  CHECK(nubo_units_parse_count("7B", "params", &count) == NUBO_OK && count == 7e9);
  CHECK(nubo_units_parse_count("7Q", "params", &count) == NUBO_ERR_INVALID_ARGUMENT);

  nubo_cost_update_options o;
  CHECK(nubo_cost_update_options_init(&o, sizeof o) == NUBO_OK);
  CHECK(o.timeout_s == 30 && o.max_skipped == 0.5);
  char dir[] = "/tmp/nubo_c_update_XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  o.cache_dir = dir;
  o.sources = "skypilot-aws";
  o.urls = "skypilot-aws=http://127.0.0.1:1/vms.csv";
  o.timeout_s = 2;
  nubo_cost_update* update = NULL;
  CHECK(nubo_cost_catalog_update(&o, &update) == NUBO_OK);
  CHECK(nubo_cost_update_count(update) == 1);
  nubo_cost_update_info u;
  u.struct_size = sizeof u;
  CHECK(nubo_cost_update_entry(update, 0, &u) == NUBO_OK);
  CHECK(strcmp(u.status, "failed") == 0 && contains(u.message, "the embedded snapshot answers"));
  nubo_cost_update_free(update);
  o.sources = "nope";
  CHECK(nubo_cost_catalog_update(&o, &update) == NUBO_ERR_INVALID_ARGUMENT);
  CHECK(contains(nubo_last_error(), "unknown catalog source 'nope'"));
  nubo_cost_catalog* current = NULL;
  CHECK(nubo_cost_catalog_current(dir, &current) == NUBO_OK);
  CHECK(nubo_cost_catalog_instance_count(current) >= 400);
  nubo_cost_catalog_free(current);
  rmdir(dir);
}

/* A queue over the fixed catalog: one p4d.24xlarge reserved for 10 h at $20/h; two jobs that
 * each need it for most of that time before their deadline, so one runs on demand. */
static void test_serving(void) {
  nubo_cost_catalog* catalog = fixed_catalog();
  nubo_cost_serving w;
  CHECK(nubo_cost_serving_init(&w, sizeof w) == NUBO_OK);
  CHECK(w.dtype == NUBO_DTYPE_BF16 && w.context_tokens == 4096);  // the C++ defaults
  w.parameters = 1e9;
  w.dtype = NUBO_DTYPE_F16;
  w.tokens_per_s = 100;
  nubo_cost_serving_plan* plan = NULL;
  CHECK(nubo_cost_serving_plan_create(catalog, &w, NULL, &plan) == NUBO_OK);
  const size_t n = nubo_cost_serving_plan_count(plan);
  CHECK(n > 0);
  nubo_cost_serving_info best;
  best.struct_size = sizeof best;
  CHECK(nubo_cost_serving_plan_option(plan, 0, &best) == NUBO_OK);
  CHECK(best.instances >= 1 && best.hourly > 0 && best.gpu_model[0] != '\0');
  CHECK(nubo_cost_serving_plan_option(plan, n, &best) == NUBO_ERR_INVALID_ARGUMENT);
  CHECK(contains(nubo_last_error(), "out of range"));
  best.struct_size = 0;  // never set: refused before anything is written
  CHECK(nubo_cost_serving_plan_option(plan, 0, &best) == NUBO_ERR_INVALID_ARGUMENT);
  nubo_cost_serving_plan_free(plan);
  // A dtype outside nubo_dtype is refused, naming the field.
  w.dtype = (nubo_dtype)77;
  plan = NULL;
  CHECK(nubo_cost_serving_plan_create(catalog, &w, NULL, &plan) == NUBO_ERR_INVALID_ARGUMENT);
  CHECK(plan == NULL && contains(nubo_last_error(), "serving->dtype is 77"));
  nubo_cost_catalog_free(catalog);
}

static void test_schedule(void) {
  nubo_cost_catalog* catalog = fixed_catalog();
  const char* queue =
      "{\"horizon\": 10, \"reservations\": [{\"instance\": \"p4d.24xlarge\", \"hourly\": 20}],"
      " \"jobs\": [{\"name\": \"a\", \"workload\": {\"flops\": 1.5e19}, \"deadline\": 6,"
      "              \"gpu\": \"A100\", \"provider\": \"aws\"},"
      "             {\"name\": \"b\", \"workload\": {\"flops\": 1.5e19}, \"deadline\": 6,"
      "              \"gpu\": \"A100\", \"provider\": \"aws\"}]}";
  nubo_cost_schedule_options o;
  o.struct_size = sizeof o;
  CHECK(nubo_cost_schedule_options_init(&o, sizeof o) == NUBO_OK);
  CHECK(o.method == NUBO_SCHEDULE_AUTO && o.exact_up_to == 300);
  o.slot_h = 1;
  nubo_cost_schedule* s = NULL;
  CHECK(nubo_cost_schedule_create(catalog, NULL, queue, &o, &s) == NUBO_OK);
  nubo_cost_schedule_summary sum;
  sum.struct_size = sizeof sum;
  CHECK(nubo_cost_schedule_get_summary(s, &sum) == NUBO_OK);
  CHECK(sum.jobs == 2 && sum.unplaced == 0 && sum.optimal && sum.method == NUBO_SCHEDULE_EXACT);
  CHECK(fabs(sum.committed_used + sum.committed_idle - 200) < 1e-6);
  int reserved = 0, on_demand = 0;
  for (size_t i = 0; i < 2; ++i) {
    nubo_cost_scheduled_job_info j;
    j.struct_size = sizeof j;
    CHECK(nubo_cost_schedule_job(s, i, &j) == NUBO_OK);
    reserved += j.placement == NUBO_PLACEMENT_RESERVED;
    on_demand += j.placement == NUBO_PLACEMENT_ON_DEMAND;
    nubo_cost_estimate_info e;
    e.struct_size = sizeof e;
    CHECK(nubo_cost_schedule_job_estimate(s, i, &e) == NUBO_OK);
    CHECK(strcmp(e.gpu_model, "A100-SXM4-40GB") == 0 || strcmp(e.gpu_model, "A100-SXM4-80GB") == 0);
    if (j.placement == NUBO_PLACEMENT_ON_DEMAND) CHECK(contains(j.reason, "capacity"));
  }
  CHECK(reserved == 1 && on_demand == 1);
  size_t needed = 0;
  CHECK(nubo_cost_schedule_json(s, NULL, 0, &needed) == NUBO_ERR_INVALID_ARGUMENT && needed > 0);
  double saving = 0;
  CHECK(nubo_cost_schedule_what_if(catalog, s, "p4d.24xlarge=1:1y", &o, &saving, NULL) == NUBO_OK);
  CHECK(nubo_cost_schedule_what_if(catalog, s, "p4d.24xlarge=1:9y", &o, &saving, NULL) ==
        NUBO_ERR_INVALID_ARGUMENT);
  CHECK(contains(nubo_last_error(), "1y or 3y"));
  nubo_cost_schedule* later = NULL;
  CHECK(nubo_cost_schedule_update(
            catalog, s, "{\"now\": 1, \"jobs\": [{\"name\": \"a\", \"state\": \"finished\"}]}", &o,
            &later) == NUBO_OK);
  sum.struct_size = sizeof sum;
  CHECK(nubo_cost_schedule_get_summary(later, &sum) == NUBO_OK && sum.jobs == 1);
  nubo_cost_schedule_free(later);
  nubo_cost_schedule* bad = NULL;
  CHECK(nubo_cost_schedule_create(catalog, NULL, "{\"jobs\": [{\"name\": \"x\"}]}", &o, &bad) ==
        NUBO_ERR_INVALID_ARGUMENT);
  CHECK(bad == NULL && contains(nubo_last_error(), "job 'x': no workload"));
  CHECK(nubo_cost_schedule_create(catalog, NULL, NULL, &o, &bad) == NUBO_ERR_INVALID_ARGUMENT);
  // A method the enum lacks is refused by value, naming the field and the values there are.
  o.method = (nubo_cost_schedule_method)42;
  CHECK(nubo_cost_schedule_create(catalog, NULL, queue, &o, &bad) == NUBO_ERR_INVALID_ARGUMENT);
  CHECK(bad == NULL && contains(nubo_last_error(), "options->method is 42") &&
        contains(nubo_last_error(), "2 heuristic"));
  nubo_cost_schedule_free(s);
  nubo_cost_catalog_free(catalog);
}

int main(void) {
  test_catalog();
  test_schedule();
  test_serving();
  test_plan();
  test_tools();
  test_sources();
  if (failures) {
    fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  printf("cost C API: all checks passed\n");
  return 0;
}
