/* nubo_parallel.h's compute, memory and stream calls from C11: GEMM and the elementwise
   kernels, the application's arrays wrapped and all-reduced in place (no buffer of nubo's),
   slices, DLPack both ways with its ownership rules, native handles and events on host
   workers, and bad input. Worker callbacks report problems through nubo_worker_fail. */
#include <dlpack/dlpack.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "c_checks.h"
#include "nubo.h"

/* C = A B on 2x3 and 3x2 matrices, then the elementwise kernels, on nubo's buffers. */
static nubo_status compute(nubo_worker* w, void* user) {
  const float a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {1, 0, 0, 1, 1, 1};
  float c[4];
  nubo_buffer *ba = NULL, *bb = NULL, *bc = NULL, *ints = NULL;
  nubo_worker_gemm_request g;
  nubo_status s = NUBO_OK;
  (void)user;
  CALL_IN_WORKER(nubo_buffer_create(w, NUBO_DTYPE_F32, 6, &ba));
  CALL_IN_WORKER(nubo_buffer_create(w, NUBO_DTYPE_F32, 6, &bb));
  CALL_IN_WORKER(nubo_buffer_create(w, NUBO_DTYPE_F32, 4, &bc));
  CALL_IN_WORKER(nubo_buffer_write(ba, a, sizeof a, 0));
  CALL_IN_WORKER(nubo_buffer_write(bb, b, sizeof b, 0));
  CALL_IN_WORKER(nubo_worker_gemm_request_init(&g, sizeof g));
  CHECK_IN_WORKER(w, g.alpha == 1.0f && g.beta == 0.0f && g.trans_a == NUBO_TRANSPOSE_NO);
  g.m = 2, g.n = 2, g.k = 3;
  CALL_IN_WORKER(nubo_worker_gemm(w, &g, ba, bb, bc));
  CALL_IN_WORKER(nubo_worker_synchronize(w));
  CALL_IN_WORKER(nubo_buffer_read(bc, c, sizeof c, 0));
  CHECK_IN_WORKER(w, c[0] == 4 && c[1] == 5 && c[2] == 10 && c[3] == 11);

  CALL_IN_WORKER(nubo_worker_fill(w, bc, 2.0));
  CALL_IN_WORKER(nubo_worker_scale(w, bc, 1.5f));
  CALL_IN_WORKER(nubo_worker_axpy(w, 2.0f, bc, bc));
  CALL_IN_WORKER(nubo_buffer_read(bc, c, sizeof c, 0));
  CHECK_IN_WORKER(w, c[0] == 9 && c[3] == 9);

  /* Bad input: each refused with what is wrong, nothing written. */
  g.m = 3;
  REFUSED_IN_WORKER(w, nubo_worker_gemm(w, &g, ba, bb, bc), "A holds 6 elements but the shape");
  g.m = 2;
  g.trans_a = (nubo_transpose)7;
  REFUSED_IN_WORKER(w, nubo_worker_gemm(w, &g, ba, bb, bc), "gemm->trans_a is 7");
  g.struct_size = 0;
  REFUSED_IN_WORKER(w, nubo_worker_gemm(w, &g, ba, bb, bc), "gemm->struct_size is 0");
  REFUSED_IN_WORKER(w, nubo_worker_gemm(w, NULL, ba, bb, bc), "gemm is NULL");
  CALL_IN_WORKER(nubo_worker_gemm_request_init(&g, sizeof g));
  g.m = 2, g.n = 2, g.k = 3;
  REFUSED_IN_WORKER(w, nubo_worker_gemm(w, &g, ba, NULL, bc), "b is NULL");
  CALL_IN_WORKER(nubo_buffer_create(w, NUBO_DTYPE_I32, 4, &ints));
  REFUSED_IN_WORKER(w, nubo_worker_scale(w, ints, 2.0f), "x holds i32");
  REFUSED_IN_WORKER(w, nubo_worker_fill(w, ints, 0.5), "not a whole number");
  REFUSED_IN_WORKER(w, nubo_worker_axpy(w, 1.0f, ba, bc), "x holds 6 elements but y 4");
  CHECK_IN_WORKER(w, nubo_worker_gemm_request_init(&g, 0) == NUBO_ERR_INVALID_ARGUMENT);
  CALL_IN_WORKER(nubo_buffer_read(bc, c, sizeof c, 0));
  CHECK_IN_WORKER(w, c[0] == 9);
  nubo_buffer_free(ba);
  nubo_buffer_free(bb);
  nubo_buffer_free(bc);
  nubo_buffer_free(ints);
  return s;
}

/* Each worker's own array, wrapped and all-reduced in place: the array holds the sum after, and
   nubo allocated nothing for it. Then a slice and a DLPack round trip over it. */
static float arrays[2][1024];

static nubo_status in_place(nubo_worker* w, void* user) {
  nubo_worker_info info;
  nubo_buffer *wrapped = NULL, *slice = NULL, *imported = NULL, *bad = NULL;
  struct DLManagedTensor* t = NULL;
  size_t before = 0, after = 0, i;
  float* mine;
  (void)user;
  info.struct_size = sizeof info;
  CALL_IN_WORKER(nubo_worker_get_info(w, &info));
  mine = arrays[info.rank];
  for (i = 0; i < 1024; ++i) mine[i] = (float)(info.rank + 1);
  CALL_IN_WORKER(nubo_worker_bytes_in_use(w, &before));
  CALL_IN_WORKER(nubo_worker_wrap(w, mine, NUBO_DTYPE_F32, 1024, &wrapped));
  CHECK_IN_WORKER(w, nubo_buffer_data(wrapped) == (void*)mine);
  CALL_IN_WORKER(nubo_worker_all_reduce(w, wrapped, NUBO_REDUCE_SUM));
  CALL_IN_WORKER(nubo_worker_bytes_in_use(w, &after));
  CHECK_IN_WORKER(w, after == before);
  CHECK_IN_WORKER(w, mine[0] == 3.0f && mine[1023] == 3.0f);

  CALL_IN_WORKER(nubo_buffer_slice(wrapped, 1000, 24, &slice));
  CHECK_IN_WORKER(w,
                  nubo_buffer_size(slice) == 24 && nubo_buffer_data(slice) == (void*)(mine + 1000));
  CALL_IN_WORKER(nubo_worker_scale(w, slice, 2.0f));
  CHECK_IN_WORKER(w, mine[999] == 3.0f && mine[1000] == 6.0f);
  REFUSED_IN_WORKER(w, nubo_buffer_slice(wrapped, 1000, 25, &bad), "outside the buffer");
  CHECK_IN_WORKER(w, bad == NULL);

  CALL_IN_WORKER(nubo_buffer_to_dlpack(slice, &t));
  CHECK_IN_WORKER(w, t->dl_tensor.data == (void*)(mine + 1000) && t->dl_tensor.shape[0] == 24);
  CHECK_IN_WORKER(w, t->dl_tensor.device.device_type == kDLCPU && t->dl_tensor.dtype.bits == 32);
  t->dl_tensor.dtype.bits = 64; /* float64: refused, and the tensor stays ours */
  REFUSED_IN_WORKER(w, nubo_buffer_from_dlpack(w, t, &imported), "dtype float64");
  CHECK_IN_WORKER(w, imported == NULL);
  t->dl_tensor.dtype.bits = 32;
  CALL_IN_WORKER(nubo_buffer_from_dlpack(w, t, &imported)); /* the buffer owns it now */
  CHECK_IN_WORKER(w, nubo_buffer_data(imported) == (void*)(mine + 1000));
  nubo_buffer_free(slice);
  nubo_buffer_free(wrapped);
  CALL_IN_WORKER(nubo_worker_fill(w, imported, 1.0));
  CHECK_IN_WORKER(w, mine[1023] == 1.0f);
  nubo_buffer_free(imported); /* runs the tensor's deleter */

  REFUSED_IN_WORKER(w, nubo_worker_wrap(w, NULL, NUBO_DTYPE_F32, 4, &bad), "null pointer");
  REFUSED_IN_WORKER(w, nubo_worker_wrap(w, mine, (nubo_dtype)17, 4, &bad), "not a nubo_dtype");
  REFUSED_IN_WORKER(w, nubo_worker_wrap(w, mine, NUBO_DTYPE_I64, (size_t)-1 / 4, &bad), "overflow");
  REFUSED_IN_WORKER(w, nubo_buffer_from_dlpack(w, NULL, &bad), "tensor is NULL");
  REFUSED_IN_WORKER(w, nubo_buffer_to_dlpack(NULL, &t), "buffer is NULL");
  CHECK_IN_WORKER(w, bad == NULL);
  return NUBO_OK;
}

/* Host workers have no CUDA stream: null handles, streams refused, events done at once. */
static nubo_status streams(nubo_worker* w, void* user) {
  nubo_worker_native_info h;
  nubo_event* e = NULL;
  int not_a_stream = 0;
  (void)user;
  h.struct_size = sizeof h;
  CALL_IN_WORKER(nubo_worker_native(w, &h));
  CHECK_IN_WORKER(w, h.cuda_stream == NULL && h.cublas_handle == NULL && h.nccl_comm == NULL &&
                         h.device_ordinal == -1);
  CALL_IN_WORKER(nubo_worker_use_stream(w, NULL));
  CALL_IN_WORKER(nubo_worker_use_own_stream(w));
  REFUSED_IN_WORKER(w, nubo_worker_use_stream(w, &not_a_stream), "without streams");
  REFUSED_IN_WORKER(w, nubo_worker_wait_native_event(w, &not_a_stream), "without streams");
  CALL_IN_WORKER(nubo_worker_record_event(w, &e));
  CHECK_IN_WORKER(w, nubo_event_done(e) == 1 && nubo_event_native(e) == NULL);
  CALL_IN_WORKER(nubo_event_synchronize(e));
  CALL_IN_WORKER(nubo_worker_wait_event(w, e));
  REFUSED_IN_WORKER(w, nubo_worker_wait_event(w, NULL), "event is NULL");
  h.struct_size = 0;
  REFUSED_IN_WORKER(w, nubo_worker_native(w, &h), "out->struct_size is 0");
  nubo_event_free(e);
  return NUBO_OK;
}

int main(void) {
  nubo_team* team = NULL;
  EXPECT(nubo_team_create_host(2, NULL, &team) == NUBO_OK);
  if (nubo_team_run(team, compute, NULL) != NUBO_OK) {
    fprintf(stderr, "compute: %s\n", nubo_last_error());
    ++failures;
  }
  if (nubo_team_run(team, in_place, NULL) != NUBO_OK) {
    fprintf(stderr, "in place: %s\n", nubo_last_error());
    ++failures;
  }
  if (nubo_team_run(team, streams, NULL) != NUBO_OK) {
    fprintf(stderr, "streams: %s\n", nubo_last_error());
    ++failures;
  }
  nubo_team_free(team);
  /* NULL handles outside a run. */
  EXPECT(nubo_buffer_data(NULL) == NULL);
  EXPECT(nubo_event_done(NULL) == 1);
  EXPECT(nubo_event_native(NULL) == NULL);
  EXPECT(nubo_event_synchronize(NULL) == NUBO_ERR_INVALID_ARGUMENT);
  EXPECT(nubo_worker_gemm(NULL, NULL, NULL, NULL, NULL) == NUBO_ERR_INVALID_ARGUMENT);
  nubo_event_free(NULL);
  if (failures) {
    fprintf(stderr, "%d failure(s)\n", failures);
    return 1;
  }
  printf("nubo_parallel.h compute, memory and streams: all checks passed\n");
  return 0;
}
