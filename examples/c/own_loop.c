/* A data-parallel loop of the application's own, in C: each process started by a launcher
 * (nubo-run -n 2, torchrun, srun, mpirun) joins with one worker and all-reduces its gradient
 * from the main thread, step after step. Run alone, it is a job of one process.
 *
 *   nubo-run -n 2 -- ./own_loop
 */
#include <stdio.h>

#include "nubo.h"

enum { kElements = 1 << 16, kSteps = 5 };

static int fail(const char* what) {
  fprintf(stderr, "own_loop: %s: %s\n", what, nubo_last_error());
  return 1;
}

int main(void) {
  static float grad[kElements];
  nubo_team* team = NULL;
  nubo_worker* w = NULL;
  nubo_buffer* buf = NULL;
  nubo_worker_info info;
  int status = 1;
  if (nubo_team_join(NULL, &team) != NUBO_OK) return fail("join");
  if (nubo_team_worker(team, 0, &w) != NUBO_OK) goto done;
  info.struct_size = sizeof info;
  if (nubo_worker_get_info(w, &info) != NUBO_OK) goto done;
  /* A buffer on the worker's device: a GPU's memory, or host memory on the CPU. (On the CPU,
     nubo_worker_wrap would reduce `grad` itself, without the copies.) */
  if (nubo_buffer_create(w, NUBO_DTYPE_F32, kElements, &buf) != NUBO_OK) goto done;
  for (int step = 0; step < kSteps; ++step) {
    for (int i = 0; i < kElements; ++i) grad[i] = (float)(info.rank + step);
    if (nubo_buffer_write(buf, grad, sizeof grad, 0) != NUBO_OK ||
        nubo_worker_all_reduce(w, buf, NUBO_REDUCE_AVG) != NUBO_OK ||
        nubo_buffer_read(buf, grad, sizeof grad, 0) != NUBO_OK)
      goto done;
  }
  /* The last step's average over ranks 0 .. size-1 of (rank + kSteps - 1). */
  const float want = (float)(kSteps - 1) + (float)(info.size - 1) / 2.0f;
  if (grad[kElements - 1] != want) {
    fprintf(stderr, "own_loop: rank %d has %g, not %g\n", info.rank, (double)grad[0], (double)want);
    goto done;
  }
  printf("rank %d of %d: %d all-reduces from the main thread, mean %g\n", info.rank, info.size,
         kSteps, (double)grad[0]);
  status = 0;
done:
  if (status) fail("own loop");
  nubo_buffer_free(buf);
  nubo_team_free(team);
  return status;
}
