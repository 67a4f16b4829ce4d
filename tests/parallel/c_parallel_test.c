/* nubo_parallel.h from C11: teams, buffers, every collective, async handles, a failing worker,
   and bad input. Worker callbacks report problems through nubo_worker_fail, so the run's
   status carries them to the main thread. */
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "c_checks.h"
#include "nubo.h"

#define EXPECT_ERROR(call, status, text)                                                     \
  do {                                                                                       \
    nubo_status s_ = (call);                                                                 \
    if (s_ != (status) || strstr(nubo_last_error(), (text)) == NULL) {                       \
      fprintf(stderr, "%s:%d: %s gave %d '%s', expected %d with '%s'\n", __FILE__, __LINE__, \
              #call, (int)s_, nubo_last_error(), (int)(status), (text));                     \
      ++failures;                                                                            \
    }                                                                                        \
  } while (0)

/* Host workers with cpu_bind: GEMM threads of their own, and CPUs to run on. */
static nubo_status shares_cores(nubo_worker* w, void* user) {
  nubo_worker_info info;
  (void)user;
  info.struct_size = sizeof info;
  CALL_IN_WORKER(nubo_worker_get_info(w, &info));
  CHECK_IN_WORKER(w, info.host_threads >= 1);
  CHECK_IN_WORKER(w, info.cpus != NULL && info.cpu_count >= 1 && info.cpus[0] >= 0);
  return NUBO_OK;
}

/* Every collective on int32, blocking and asynchronous, checked exactly; user points to the
   backend the workers' devices must have. */
static nubo_status collectives(nubo_worker* w, void* user) {
  nubo_worker_info info;
  nubo_buffer *buf = NULL, *gathered = NULL, *scattered = NULL, *exchanged = NULL;
  nubo_pending* pending = NULL;
  int32_t v[6], got[18];
  int n, r, i;
  info.struct_size = sizeof info;
  CALL_IN_WORKER(nubo_worker_get_info(w, &info));
  n = info.size;
  r = info.rank;
  CHECK_IN_WORKER(w, info.local_size == n && info.backend == *(const nubo_backend*)user);

  CALL_IN_WORKER(nubo_buffer_create(w, NUBO_DTYPE_I32, 6, &buf));
  CHECK_IN_WORKER(w, nubo_buffer_size(buf) == 6 && nubo_buffer_bytes(buf) == 24);
  for (i = 0; i < 6; ++i) v[i] = r * 10 + i;
  CALL_IN_WORKER(nubo_buffer_write(buf, v, sizeof v, 0));
  CALL_IN_WORKER(nubo_worker_all_reduce(w, buf, NUBO_REDUCE_SUM));
  CALL_IN_WORKER(nubo_buffer_read(buf, got, sizeof v, 0));
  for (i = 0; i < 6; ++i) CHECK_IN_WORKER(w, got[i] == 10 * n * (n - 1) / 2 + n * i);

  CALL_IN_WORKER(nubo_buffer_write(buf, v, sizeof v, 0));
  CALL_IN_WORKER(nubo_worker_broadcast_async(w, buf, n - 1, &pending));
  CALL_IN_WORKER(nubo_pending_wait(pending));
  CHECK_IN_WORKER(w, nubo_pending_done(pending) == 1);
  nubo_pending_free(pending);
  CALL_IN_WORKER(nubo_buffer_read(buf, got, sizeof v, 0));
  CHECK_IN_WORKER(w, got[5] == (n - 1) * 10 + 5);

  CALL_IN_WORKER(nubo_buffer_write(buf, v, sizeof v, 0));
  CALL_IN_WORKER(nubo_buffer_create(w, NUBO_DTYPE_I32, (size_t)(6 * n), &gathered));
  CALL_IN_WORKER(nubo_worker_all_gather(w, buf, gathered));
  CALL_IN_WORKER(nubo_buffer_read(gathered, got, (size_t)(6 * n) * sizeof(int32_t), 0));
  CHECK_IN_WORKER(w, got[6 * (n - 1) + 2] == (n - 1) * 10 + 2);

  /* all_to_all in blocks of 6: every rank's `gathered` is the same, so rank r receives
   * block r (r * 10 + i) from every rank. */
  CALL_IN_WORKER(nubo_buffer_create(w, NUBO_DTYPE_I32, (size_t)(6 * n), &exchanged));
  CALL_IN_WORKER(nubo_worker_all_to_all(w, gathered, exchanged));
  CALL_IN_WORKER(nubo_buffer_read(exchanged, got, (size_t)(6 * n) * sizeof(int32_t), 0));
  CHECK_IN_WORKER(w, got[6 * (n - 1) + 1] == r * 10 + 1 && got[1] == r * 10 + 1);

  CALL_IN_WORKER(nubo_buffer_create(w, NUBO_DTYPE_I32, 6, &scattered));
  CALL_IN_WORKER(
      nubo_worker_reduce_scatter_async(w, gathered, scattered, NUBO_REDUCE_MAX, &pending));
  CALL_IN_WORKER(nubo_worker_barrier(w));
  nubo_pending_free(pending); /* waits for it */
  CALL_IN_WORKER(nubo_buffer_read(scattered, got, 6 * sizeof(int32_t), 0));
  /* Every rank's `gathered` is the same, so block r reduced by max is rank r's v itself. */
  CHECK_IN_WORKER(w, got[0] == r * 10 && got[5] == r * 10 + 5);

  CALL_IN_WORKER(nubo_worker_barrier_async(w, &pending));
  CALL_IN_WORKER(nubo_pending_wait(pending));
  CALL_IN_WORKER(nubo_pending_wait(pending)); /* a second wait returns at once */
  nubo_pending_free(pending);
  nubo_buffer_free(scattered);
  nubo_buffer_free(gathered);
  nubo_buffer_free(exchanged);
  nubo_buffer_free(buf);
  return NUBO_OK;
}

static nubo_status rank1_fails(nubo_worker* w, void* user) {
  nubo_worker_info info;
  nubo_buffer* buf = NULL;
  nubo_status s;
  info.struct_size = sizeof info;
  nubo_worker_get_info(w, &info);
  if (info.rank == 1) return nubo_worker_fail(w, NUBO_ERR_NOT_FOUND, "no data for my shard");
  CALL_IN_WORKER(nubo_buffer_create(w, NUBO_DTYPE_F32, 8, &buf));
  s = nubo_worker_all_reduce(w, buf, NUBO_REDUCE_SUM);
  if (s == NUBO_ERR_CANCELLED) atomic_fetch_add((atomic_int*)user, 1);
  nubo_buffer_free(buf);
  return s;
}

static nubo_status bad_input(nubo_worker* w, void* user) {
  nubo_buffer *a = NULL, *b = NULL, *bad = NULL;
  nubo_pending* p = (nubo_pending*)1;
  size_t begin = 0, count = 0;
  (void)user;
  CALL_IN_WORKER(nubo_buffer_create(w, NUBO_DTYPE_F32, 4, &a));
  CHECK_IN_WORKER(w, nubo_buffer_create(w, (nubo_dtype)42, 4, &bad) == NUBO_ERR_INVALID_ARGUMENT);
  CHECK_IN_WORKER(w, bad == NULL);
  CHECK_IN_WORKER(w, nubo_buffer_create(w, NUBO_DTYPE_TF32, 4, &bad) == NUBO_ERR_INVALID_ARGUMENT);
  CHECK_IN_WORKER(w, strstr(nubo_last_error(), "compute precision") != NULL);
  CHECK_IN_WORKER(w, nubo_worker_all_reduce(w, a, (nubo_reduce_op)9) == NUBO_ERR_INVALID_ARGUMENT);
  CHECK_IN_WORKER(w, strstr(nubo_last_error(), "not a nubo_reduce_op") != NULL);
  CHECK_IN_WORKER(w, nubo_worker_all_reduce(w, NULL, NUBO_REDUCE_SUM) == NUBO_ERR_INVALID_ARGUMENT);
  CHECK_IN_WORKER(w, strstr(nubo_last_error(), "buf is NULL") != NULL);
  CHECK_IN_WORKER(w, nubo_buffer_write(a, "x", 100, 0) == NUBO_ERR_INVALID_ARGUMENT);
  CHECK_IN_WORKER(
      w, nubo_worker_all_reduce_async(w, a, NUBO_REDUCE_SUM, NULL) == NUBO_ERR_INVALID_ARGUMENT);
  CALL_IN_WORKER(nubo_buffer_create(w, NUBO_DTYPE_F32, 7, &b));
  CHECK_IN_WORKER(w, nubo_worker_all_gather_async(w, a, b, &p) == NUBO_ERR_INVALID_ARGUMENT);
  CHECK_IN_WORKER(w, p == NULL);
  CHECK_IN_WORKER(w, nubo_worker_shard(w, 10, &begin, NULL) == NUBO_ERR_INVALID_ARGUMENT);
  CALL_IN_WORKER(nubo_worker_shard(w, 10, &begin, &count));
  CHECK_IN_WORKER(w, (count == 3 || count == 4) && begin + count <= 10);
  nubo_buffer_free(a);
  nubo_buffer_free(b);
  return NUBO_OK;
}

int main(void) {
  nubo_team* team = NULL;
  nubo_team_options options;
  nubo_device_report* report = NULL;
  nubo_device_discover_options d;
  size_t idx[2];
  size_t count = 0;
  atomic_int cancelled = 0;
  nubo_backend host = NUBO_BACKEND_HOST, sim = NUBO_BACKEND_SIM;
  int n;

  EXPECT(nubo_team_options_init(&options, sizeof options) == NUBO_OK);
  EXPECT(options.timeout_seconds == 0);
  options.timeout_seconds = 30;
  for (n = 1; n <= 3; ++n) {
    EXPECT(nubo_team_create_host((size_t)n, &options, &team) == NUBO_OK);
    EXPECT(nubo_team_size(team) == n);
    if (nubo_team_run(team, collectives, &host) != NUBO_OK) {
      fprintf(stderr, "collectives on %d workers: %s\n", n, nubo_last_error());
      ++failures;
    }
    nubo_team_free(team);
    team = NULL;
  }

  /* A worker's failure reaches the caller with its status and message, naming the rank. */
  EXPECT(nubo_team_create_host(3, &options, &team) == NUBO_OK);
  EXPECT_ERROR(nubo_team_run(team, rank1_fails, &cancelled), NUBO_ERR_NOT_FOUND,
               "nubo_team_run: rank 1: no data for my shard");
  EXPECT(nubo_team_run(team, bad_input, NULL) == NUBO_OK);
  if (failures) fprintf(stderr, "last error: %s\n", nubo_last_error());
  EXPECT_ERROR(nubo_team_run(team, NULL, NULL), NUBO_ERR_INVALID_ARGUMENT, "fn is NULL");
  nubo_team_free(team);

  /* Simulated GPUs from a report's selection. */
  EXPECT(nubo_device_discover_options_init(&d, sizeof d) == NUBO_OK);
  d.sim_devices = "4xH100-SXM5-80GB";
  d.probe_cuda = 0;
  EXPECT(nubo_device_discover(&d, &report) == NUBO_OK);
  EXPECT(nubo_device_report_select(report, NULL, idx, 1, &count) == NUBO_OK);
  idx[1] = 3;
  EXPECT(nubo_team_create(report, idx, 2, NULL, &team) == NUBO_OK);
  if (nubo_team_run(team, collectives, &sim) != NUBO_OK) {
    fprintf(stderr, "collectives on 2 sim workers: %s\n", nubo_last_error());
    ++failures;
  }
  nubo_team_free(team);
  team = NULL;
  idx[1] = 9;
  EXPECT_ERROR(nubo_team_create(report, idx, 2, NULL, &team), NUBO_ERR_INVALID_ARGUMENT,
               "indices[1] is 9: the report has 4 devices");
  EXPECT(team == NULL);
  nubo_device_report_free(report);

  /* Bad input outside a run. */
  EXPECT_ERROR(nubo_team_create_host(0, NULL, &team), NUBO_ERR_INVALID_ARGUMENT, "workers is 0");
  EXPECT_ERROR(nubo_team_create_host(1, NULL, NULL), NUBO_ERR_INVALID_ARGUMENT, "out is NULL");
  options.struct_size = 0;
  EXPECT_ERROR(nubo_team_create_host(1, &options, &team), NUBO_ERR_INVALID_ARGUMENT,
               "options->struct_size is 0");
  EXPECT(nubo_team_options_init(&options, sizeof options) == NUBO_OK);
  options.timeout_seconds = -1;
  EXPECT_ERROR(nubo_team_create_host(1, &options, &team), NUBO_ERR_INVALID_ARGUMENT,
               "timeout_seconds");
  options.timeout_seconds = NAN;
  EXPECT_ERROR(nubo_team_create_host(1, &options, &team), NUBO_ERR_INVALID_ARGUMENT,
               "timeout_seconds");
  EXPECT(nubo_team_size(NULL) == 0);
  EXPECT(nubo_buffer_size(NULL) == 0);
  EXPECT(nubo_pending_done(NULL) == 1);
  EXPECT_ERROR(nubo_pending_wait(NULL), NUBO_ERR_INVALID_ARGUMENT, "pending is NULL");
  nubo_team_free(NULL);
  nubo_buffer_free(NULL);
  nubo_pending_free(NULL);

  /* Each host worker's share of the cores, pinned with cpu_bind; the team's description. */
  EXPECT(nubo_team_options_init(&options, sizeof options) == NUBO_OK);
  EXPECT(options.cpu_bind == 0);
  options.cpu_bind = 1;
  EXPECT(nubo_team_create_host(2, &options, &team) == NUBO_OK);
  EXPECT(nubo_team_run(team, shares_cores, NULL) == NUBO_OK);
  {
    char small[4];
    size_t needed = 0;
    char* text;
    EXPECT_ERROR(nubo_team_describe(team, small, sizeof small, &needed), NUBO_ERR_INVALID_ARGUMENT,
                 "the description needs");
    EXPECT(small[0] == '\0' && needed > 4);
    text = malloc(needed);
    EXPECT(text && nubo_team_describe(team, text, needed, NULL) == NUBO_OK);
    EXPECT(text && strstr(text, "rank 1: ") && strstr(text, "GEMM thread") &&
           strstr(text, "pinned to CPUs"));
    free(text);
  }
  EXPECT_ERROR(nubo_team_describe(NULL, NULL, 0, NULL), NUBO_ERR_INVALID_ARGUMENT, "team is NULL");
  nubo_team_free(team);
  options.cpu_bind = 2;
  EXPECT_ERROR(nubo_team_create_host(1, &options, &team), NUBO_ERR_INVALID_ARGUMENT,
               "options->cpu_bind is 2");

  /* From the environment without a job: this process alone. */
  EXPECT(nubo_team_from_env(NULL, &team) == NUBO_OK);
  EXPECT(nubo_team_size(team) == 1);
  nubo_team_free(team);

  /* Joined: the worker is lent by the team and called from this (the main) thread. */
  EXPECT(nubo_team_join(NULL, &team) == NUBO_OK);
  {
    nubo_worker* w = NULL;
    nubo_buffer* b = NULL;
    float x = 2.5f;
    EXPECT(nubo_team_worker(team, 0, &w) == NUBO_OK && w != NULL);
    EXPECT(nubo_buffer_create(w, NUBO_DTYPE_F32, 1, &b) == NUBO_OK);
    EXPECT(nubo_buffer_write(b, &x, sizeof x, 0) == NUBO_OK);
    EXPECT(nubo_worker_all_reduce(w, b, NUBO_REDUCE_SUM) == NUBO_OK);
    x = 0;
    EXPECT(nubo_buffer_read(b, &x, sizeof x, 0) == NUBO_OK && x == 2.5f);
    nubo_buffer_free(b);
    EXPECT_ERROR(nubo_team_worker(team, 1, &w), NUBO_ERR_INVALID_ARGUMENT,
                 "worker 1 is out of range: this process has 1 workers");
    EXPECT(w == NULL);
    EXPECT_ERROR(nubo_team_worker(team, -1, &w), NUBO_ERR_INVALID_ARGUMENT, "out of range");
    EXPECT_ERROR(nubo_team_worker(NULL, 0, &w), NUBO_ERR_INVALID_ARGUMENT, "team is NULL");
    EXPECT_ERROR(nubo_team_worker(team, 0, NULL), NUBO_ERR_INVALID_ARGUMENT, "out is NULL");
  }
  nubo_team_free(team);
  EXPECT_ERROR(nubo_team_join(NULL, NULL), NUBO_ERR_INVALID_ARGUMENT, "out is NULL");

  if (failures) {
    fprintf(stderr, "%d failure(s)\n", failures);
    return 1;
  }
  printf("nubo_parallel.h: all checks passed\n");
  return 0;
}
