/* nubo_optimizer.h from C11: a bf16 model of two slices trained at ZeRO stage 1 on two host
   workers, its checkpoint loaded at stage 3 where gather returns the same parameters, the
   mixed-precision kernels, the memory formulas, and bad input. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "c_checks.h"
#include "nubo.h"

static const size_t kSlices[2] = {300, 45};
static char g_path[512];
static float g_trained[345];

static nubo_status train(nubo_worker* w, void* user) {
  nubo_sharded_options o;
  size_t padded = 0, count = 0;
  nubo_buffer *params = NULL, *grads = NULL, *f32 = NULL, *none = NULL;
  nubo_sharded_optimizer* opt = NULL;
  nubo_sharded_step_summary step;
  nubo_shard_slice_info slice;
  float host[1024];
  float scale = 0;
  uint64_t steps = 0;
  size_t i, s;
  (void)user;
  CALL_IN_WORKER(nubo_sharded_options_init(&o, sizeof o));
  CHECK_IN_WORKER(w, o.optimizer == NUBO_UPDATE_ADAMW && o.stage == 1 && o.init_scale == 65536.0f);
  o.precision = NUBO_DTYPE_BF16;
  o.lr = 0.01f;
  CALL_IN_WORKER(nubo_sharded_padded_size(&o, 2, kSlices, 2, &padded));
  CHECK_IN_WORKER(w, padded == 768); /* 300: 2 shards of 256 (150 rounded up); 45: 2 of 128 */
  CALL_IN_WORKER(nubo_buffer_create(w, NUBO_DTYPE_BF16, padded, &params));
  CALL_IN_WORKER(nubo_buffer_create(w, NUBO_DTYPE_BF16, padded, &grads));
  CALL_IN_WORKER(nubo_buffer_create(w, NUBO_DTYPE_F32, padded, &f32));
  CALL_IN_WORKER(nubo_worker_fill(w, f32, 0.5));
  CALL_IN_WORKER(nubo_worker_cast(w, f32, params));
  CALL_IN_WORKER(nubo_sharded_optimizer_create(w, params, &o, kSlices, 2, &opt));
  CALL_IN_WORKER(nubo_sharded_optimizer_slice_count(opt, &count));
  CHECK_IN_WORKER(w, count == 2);
  slice.struct_size = sizeof slice;
  CALL_IN_WORKER(nubo_sharded_optimizer_slice(opt, 1, &slice));
  CHECK_IN_WORKER(w, slice.size == 45 && slice.offset == 512 && slice.shard == 128 &&
                         slice.padded == 256 && slice.shard_offset == 256);
  REFUSED_IN_WORKER(w, nubo_sharded_optimizer_slice(opt, 2, &slice), "slice");
  step.struct_size = sizeof step;
  for (i = 0; i < 3; ++i) {
    CALL_IN_WORKER(nubo_worker_fill(w, grads, 0.25));
    /* Slice by slice, as backward produces them; then the step. */
    for (s = 0; s < 2; ++s) {
      nubo_buffer* g = NULL;
      CALL_IN_WORKER(nubo_sharded_optimizer_slice(opt, s, &slice));
      CALL_IN_WORKER(nubo_buffer_slice(grads, slice.offset, slice.padded, &g));
      CALL_IN_WORKER(nubo_sharded_optimizer_reduce(opt, s, g));
      nubo_buffer_free(g);
    }
    CALL_IN_WORKER(nubo_sharded_optimizer_step(opt, NULL, &step));
    CHECK_IN_WORKER(w, step.applied == 1 && step.loss_scale == 1.0);
  }
  CALL_IN_WORKER(nubo_sharded_optimizer_steps(opt, &steps));
  CALL_IN_WORKER(nubo_sharded_optimizer_loss_scale(opt, &scale));
  CHECK_IN_WORKER(w, steps == 3 && scale == 1.0f);
  /* Three AdamW steps of lr 0.01 on a constant gradient: 0.5 - 0.03, in bf16. */
  CALL_IN_WORKER(nubo_worker_cast(w, params, f32));
  CALL_IN_WORKER(nubo_buffer_read(f32, host, padded * sizeof(float), 0));
  CHECK_IN_WORKER(w, fabsf(host[0] - 0.47f) < 0.004f && fabsf(host[512] - 0.47f) < 0.004f);
  for (i = 0; i < 300; ++i) g_trained[i] = host[i];
  for (i = 0; i < 45; ++i) g_trained[300 + i] = host[512 + i];
  CALL_IN_WORKER(nubo_sharded_optimizer_save(opt, g_path));
  REFUSED_IN_WORKER(w, nubo_sharded_optimizer_gather(opt, 0, &none), "only stage 3");
  CHECK_IN_WORKER(w, none == NULL);
  REFUSED_IN_WORKER(w, nubo_sharded_optimizer_step(opt, NULL, NULL), "was not reduced");
  nubo_sharded_optimizer_free(opt);
  nubo_buffer_free(params);
  nubo_buffer_free(grads);
  nubo_buffer_free(f32);
  return NUBO_OK;
}

static nubo_status resume_stage3(nubo_worker* w, void* user) {
  nubo_sharded_options o;
  size_t padded = 0, i;
  nubo_buffer *params = NULL, *got = NULL, *f32 = NULL;
  nubo_sharded_optimizer* opt = NULL;
  float host[300];
  (void)user;
  CALL_IN_WORKER(nubo_sharded_options_init(&o, sizeof o));
  o.precision = NUBO_DTYPE_BF16;
  o.stage = 3;
  CALL_IN_WORKER(nubo_sharded_padded_size(&o, 2, kSlices, 2, &padded));
  CALL_IN_WORKER(nubo_buffer_create(w, NUBO_DTYPE_BF16, padded, &params));
  CALL_IN_WORKER(nubo_worker_fill(w, params, 0.0));
  CALL_IN_WORKER(nubo_sharded_optimizer_create(w, params, &o, kSlices, 2, &opt));
  nubo_buffer_free(params); /* stage 3 keeps its shard only */
  CALL_IN_WORKER(nubo_sharded_optimizer_load(opt, g_path));
  CALL_IN_WORKER(nubo_sharded_optimizer_prefetch(opt, 0));
  CALL_IN_WORKER(nubo_sharded_optimizer_gather(opt, 0, &got));
  CHECK_IN_WORKER(w, nubo_buffer_size(got) == 300);
  CALL_IN_WORKER(nubo_buffer_create(w, NUBO_DTYPE_F32, 300, &f32));
  CALL_IN_WORKER(nubo_worker_cast(w, got, f32));
  CALL_IN_WORKER(nubo_buffer_read(f32, host, sizeof host, 0));
  for (i = 0; i < 300; ++i) CHECK_IN_WORKER(w, host[i] == g_trained[i]);
  nubo_buffer_free(got);
  CALL_IN_WORKER(nubo_sharded_optimizer_release(opt, 0));
  nubo_buffer_free(f32);
  nubo_sharded_optimizer_free(opt);
  return NUBO_OK;
}

static nubo_status kernels(nubo_worker* w, void* user) {
  nubo_optimizer_update u;
  nubo_buffer *master = NULL, *g = NULL, *m = NULL, *v = NULL, *stats = NULL, *p16 = NULL;
  float host[2];
  (void)user;
  CALL_IN_WORKER(nubo_optimizer_update_init(&u, sizeof u));
  CHECK_IN_WORKER(w, u.kind == NUBO_UPDATE_ADAMW && u.step == 1 && u.grad_scale == 1.0f);
  u.kind = NUBO_UPDATE_SGD;
  u.lr = 0.5f;
  u.momentum = 0;
  CALL_IN_WORKER(nubo_buffer_create(w, NUBO_DTYPE_F32, 2, &master));
  CALL_IN_WORKER(nubo_buffer_create(w, NUBO_DTYPE_F32, 2, &g));
  CALL_IN_WORKER(nubo_buffer_create(w, NUBO_DTYPE_F32, 2, &m));
  CALL_IN_WORKER(nubo_buffer_create(w, NUBO_DTYPE_F32, 2, &stats));
  CALL_IN_WORKER(nubo_buffer_create(w, NUBO_DTYPE_F16, 2, &p16));
  CALL_IN_WORKER(nubo_worker_fill(w, master, 1.0));
  CALL_IN_WORKER(nubo_worker_fill(w, g, 4.0));
  CALL_IN_WORKER(nubo_worker_fill(w, m, 0.0));
  CALL_IN_WORKER(nubo_worker_fill(w, stats, 0.0));
  CALL_IN_WORKER(nubo_worker_unscale_check(w, g, 0.25f, stats));
  CALL_IN_WORKER(nubo_buffer_read(stats, host, sizeof host, 0));
  CHECK_IN_WORKER(w, host[0] == 0.0f && host[1] == 2.0f); /* 1^2 + 1^2 */
  CALL_IN_WORKER(nubo_worker_optimizer_step(w, &u, master, g, m, NULL, p16));
  CALL_IN_WORKER(nubo_buffer_read(master, host, sizeof host, 0));
  CHECK_IN_WORKER(w, host[0] == 0.5f && host[1] == 0.5f);
  u.kind = NUBO_UPDATE_ADAM;
  REFUSED_IN_WORKER(w, nubo_worker_optimizer_step(w, &u, master, g, m, NULL, NULL), "v");
  CALL_IN_WORKER(nubo_buffer_create(w, NUBO_DTYPE_F32, 3, &v));
  REFUSED_IN_WORKER(w, nubo_worker_cast(w, v, p16), "in holds 3 elements but out 2");
  nubo_buffer_free(master);
  nubo_buffer_free(g);
  nubo_buffer_free(m);
  nubo_buffer_free(v);
  nubo_buffer_free(stats);
  nubo_buffer_free(p16);
  return NUBO_OK;
}

/* argv[1]: a directory of the test's own for the checkpoint. */
int main(int argc, char** argv) {
  nubo_team* team = NULL;
  nubo_sharded_memory_info mem;
  if (argc < 2) {
    fprintf(stderr, "usage: c_sharded_test DIR\n");
    return 2;
  }
  snprintf(g_path, sizeof g_path, "%s/c_sharded_test.opt", argv[1]);
  EXPECT(nubo_team_create_host(2, NULL, &team) == NUBO_OK);
  if (nubo_team_run(team, train, NULL) != NUBO_OK) {
    fprintf(stderr, "train: %s\n", nubo_last_error());
    ++failures;
  }
  if (nubo_team_run(team, resume_stage3, NULL) != NUBO_OK) {
    fprintf(stderr, "resume at stage 3: %s\n", nubo_last_error());
    ++failures;
  }
  if (nubo_team_run(team, kernels, NULL) != NUBO_OK) {
    fprintf(stderr, "kernels: %s\n", nubo_last_error());
    ++failures;
  }
  nubo_team_free(team);
  remove(g_path);
  mem.struct_size = sizeof mem;
  EXPECT(nubo_sharded_memory_per_worker(7.5e9, 2, NUBO_UPDATE_ADAM, NUBO_DTYPE_F16, 64, &mem) ==
         NUBO_OK);
  EXPECT(fabs(mem.total / 1e9 - 16.64) < 0.01);
  EXPECT(nubo_sharded_memory_per_worker(1, 4, NUBO_UPDATE_ADAM, NUBO_DTYPE_F16, 64, &mem) ==
         NUBO_ERR_INVALID_ARGUMENT);
  EXPECT(nubo_sharded_optimizer_create(NULL, NULL, NULL, NULL, 0, NULL) ==
         NUBO_ERR_INVALID_ARGUMENT);
  nubo_sharded_optimizer_free(NULL);
  if (failures) {
    fprintf(stderr, "%d failure(s)\n", failures);
    return 1;
  }
  printf("nubo_optimizer.h: all checks passed\n");
  return 0;
}
