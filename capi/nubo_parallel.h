/*
 * nubo_parallel.h: teams of workers, buffers on their devices (nubo's, or the application's
 * own memory without a copy, DLPack included), the compute a worker does on them, its CUDA
 * streams and events, and collectives, in C (docs/parallel.md). Included by nubo.h; the
 * conventions of nubo.h hold (docs/abi.md).
 *
 *   static nubo_status step(nubo_worker* w, void* user) {
 *     nubo_buffer* grad = NULL;
 *     nubo_status s = nubo_buffer_create(w, NUBO_DTYPE_F32, 1024, &grad);
 *     if (s == NUBO_OK) s = nubo_worker_all_reduce(w, grad, NUBO_REDUCE_AVG);
 *     nubo_buffer_free(grad);
 *     return s;
 *   }
 *   ...
 *   nubo_team* team = NULL;
 *   if (nubo_team_create_host(4, NULL, &team) != NUBO_OK ||
 *       nubo_team_run(team, step, NULL) != NUBO_OK)
 *     fprintf(stderr, "%s\n", nubo_last_error());
 *   nubo_team_free(team);
 *
 * A process started by a launcher (nubo-run, torchrun, srun, mpirun) joins with one worker
 * and calls it from its own loop:
 *
 *   nubo_team* team = NULL;
 *   nubo_worker* w = NULL;
 *   if (nubo_team_join(NULL, &team) == NUBO_OK && nubo_team_worker(team, 0, &w) == NUBO_OK)
 *     for (int step = 0; step < steps; ++step) nubo_worker_all_reduce(w, grad, NUBO_REDUCE_AVG);
 *   nubo_team_free(team);
 */
#ifndef NUBO_PARALLEL_H
#define NUBO_PARALLEL_H

#include "nubo.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct nubo_team nubo_team;       /* owned by the caller: nubo_team_free */
typedef struct nubo_worker nubo_worker;   /* lent by its team: nubo_team_worker, or a run */
typedef struct nubo_buffer nubo_buffer;   /* owned by the caller: nubo_buffer_free */
typedef struct nubo_pending nubo_pending; /* owned by the caller: nubo_pending_free */

/* How a team is made (C++: nubo::TeamOptions). */
typedef struct nubo_team_options {
  uint32_t struct_size;
  /* Seconds a collective waits for the other ranks before it fails naming them, up to 86400;
     0 (the default): NUBO_TIMEOUT, else 60 (C++: timeout) */
  double timeout_seconds;
  /* nonzero: pin each host worker (and its GEMM threads) to cores of its own, NUMA-aware; 0
     (the default): NUBO_CPU_BIND decides, else they float. */
  int cpu_bind;
  /* Watch this process's GPUs' health every so many seconds (0, the default: not at all): a
     new fatal XID or double-bit ECC error makes every collective fail at once with
     NUBO_ERR_CANCELLED, naming the GPU (docs/preflight.md). Up to 3600. */
  double health_watch_seconds;
  /* Threads for this process's GEMMs on the host, shared among its host workers, up to 4096;
     0 (the default): OPENBLAS_NUM_THREADS or OMP_NUM_THREADS, else its share of the cores. */
  int gemm_threads;
} nubo_team_options;

/* Fills *options with the defaults; struct_size as for every options struct. */
NUBO_C_API nubo_status nubo_team_options_init(nubo_team_options* options, size_t struct_size);

/*
 * Teams. options may be NULL (the defaults).
 *  - nubo_team_create: one worker per device of the report, indices[0..count) as given by
 *    nubo_device_report_select; the report may be freed afterwards.
 *  - nubo_team_create_host: `workers` workers on the host CPU (1 to 1024).
 *  - nubo_team_from_env: joins the job that started this process (nubo-run, torchrun, srun,
 *    mpirun or SkyPilot; docs/parallel.md), with one worker: the GPU of its local rank if the
 *    machine has GPUs, else the CPU. Without a launcher, a team of this process alone.
 *  - nubo_team_join: the same, for use from the caller's own loop: take the worker with
 *    nubo_team_worker(team, 0, &w) and call it from any thread. With cpu_bind, the calling
 *    thread is pinned to the worker's cores.
 * Errors: NUBO_ERR_INVALID_ARGUMENT (bad indices, a malformed variable), NUBO_ERR_TIMEOUT or
 * NUBO_ERR_UNAVAILABLE (the other processes did not come, or the rendezvous is unreachable).
 */
NUBO_C_API nubo_status nubo_team_create(const nubo_device_report* report, const size_t* indices,
                                        size_t count, const nubo_team_options* options,
                                        nubo_team** out);
NUBO_C_API nubo_status nubo_team_create_host(size_t workers, const nubo_team_options* options,
                                             nubo_team** out);
NUBO_C_API nubo_status nubo_team_from_env(const nubo_team_options* options, nubo_team** out);
NUBO_C_API nubo_status nubo_team_join(const nubo_team_options* options, nubo_team** out);
/*
 * This process's worker number local_rank (0 .. nubo_team_local_size - 1), lent: valid while
 * the team lives. Its calls may come from any thread, one at a time per worker (a blocking
 * collective holds the worker until it returns); every rank must issue the same collectives in
 * the same order.
 */
NUBO_C_API nubo_status nubo_team_worker(nubo_team* team, int local_rank, nubo_worker** out);
/* Accepts NULL. Across processes it waits (up to the timeout) for the others to finish too. */
NUBO_C_API void nubo_team_free(nubo_team* team);
/* Workers in the team (all processes), and in this process; 0 for NULL. */
NUBO_C_API int nubo_team_size(const nubo_team* team);
NUBO_C_API int nubo_team_local_size(const nubo_team* team);
/*
 * What the team is made of, for logs (as Team::describe): a line per worker of this process
 * (device, GEMM threads on the host and why, pinned CPUs), then the link between the
 * processes. NUL-terminated into buf of capacity bytes; *needed (if not NULL) receives the
 * size with the NUL; a NULL or too-small buf gives NUBO_ERR_INVALID_ARGUMENT.
 */
NUBO_C_API nubo_status nubo_team_describe(const nubo_team* team, char* buf, size_t capacity,
                                          size_t* needed);

/*
 * A run's function, called on every worker of this process at once, each on its own thread,
 * with `user` unchanged. Return NUBO_OK, or a failure status: the message is what the last
 * failing nubo call on this thread left in nubo_last_error(), or what nubo_worker_fail set.
 */
typedef nubo_status (*nubo_worker_fn)(nubo_worker* worker, void* user);

/*
 * Runs fn on every worker and returns when all have returned. When one fails, the team's
 * pending and later collectives fail at once (NUBO_ERR_CANCELLED), in other processes too, and
 * this returns the first failure's status, its message in nubo_last_error() naming the rank.
 */
NUBO_C_API nubo_status nubo_team_run(nubo_team* team, nubo_worker_fn fn, void* user);

/* For a run's function: records `message` as this thread's error and returns status, so that
   `return nubo_worker_fail(w, NUBO_ERR_INVALID_ARGUMENT, "no data for my shard");` fails the
   run with that message. */
NUBO_C_API nubo_status nubo_worker_fail(nubo_worker* worker, nubo_status status,
                                        const char* message);

typedef struct nubo_worker_info {
  uint32_t struct_size;
  int rank;       /* in the team, 0 .. size - 1 */
  int size;       /* workers in the team, all processes */
  int local_rank; /* among this process's workers */
  int local_size;
  nubo_backend backend;    /* of its device */
  int device_index;        /* the device's index in discovery's report (0 for the host CPU) */
  const char* device_name; /* valid while the team lives */
  /* The threads its GEMMs run on the host (its share of the cores); 0 for a GPU worker. */
  int host_threads;
  /* The CPUs it is pinned to while it runs (cpu_bind), cpu_count of them; NULL and 0 when it
     floats. Valid while the team lives. */
  const int* cpus;
  size_t cpu_count;
} nubo_worker_info;

NUBO_C_API nubo_status nubo_worker_get_info(const nubo_worker* worker, nubo_worker_info* out);
/* This worker's rows of a batch of n: n / size each, the first n % size ranks one more, in
   rank order; *begin and *count receive them. */
NUBO_C_API nubo_status nubo_worker_shard(const nubo_worker* worker, size_t n, size_t* begin,
                                         size_t* count);

/*
 * Buffers: count elements of type on the worker's device. A buffer may outlive its team, but
 * is used from one thread at a time. Reads and writes copy `bytes` at byte `offset` and have
 * finished when they return; a range outside the buffer is NUBO_ERR_INVALID_ARGUMENT.
 */
NUBO_C_API nubo_status nubo_buffer_create(nubo_worker* worker, nubo_dtype type, size_t count,
                                          nubo_buffer** out);
NUBO_C_API void nubo_buffer_free(nubo_buffer* buffer);          /* accepts NULL */
NUBO_C_API size_t nubo_buffer_size(const nubo_buffer* buffer);  /* elements; 0 for NULL */
NUBO_C_API size_t nubo_buffer_bytes(const nubo_buffer* buffer); /* 0 for NULL */
NUBO_C_API nubo_status nubo_buffer_dtype(const nubo_buffer* buffer, nubo_dtype* out);
NUBO_C_API nubo_status nubo_buffer_write(nubo_buffer* buffer, const void* host, size_t bytes,
                                         size_t offset);
NUBO_C_API nubo_status nubo_buffer_read(const nubo_buffer* buffer, void* host, size_t bytes,
                                        size_t offset);

/*
 * Collectives, called by every rank with the same sizes, types and order (a mismatch is
 * NUBO_ERR_INVALID_ARGUMENT on every rank). A rank that does not take part within the timeout
 * gives NUBO_ERR_TIMEOUT or NUBO_ERR_UNAVAILABLE naming it; NUBO_ERR_CANCELLED when another
 * worker failed.
 *  - all_reduce, broadcast: in place;
 *  - all_gather: out holds size * in's elements, rank r's in at r * in's size;
 *  - reduce_scatter: in holds size * out's elements; rank r's out gets block r reduced;
 *  - all_to_all: in and out hold size blocks of one size; rank r's out gets block r of every
 *    rank's in, rank j's at block j.
 * The _async forms return at once with *out a pending collective; the buffers must not be
 * touched until nubo_pending_wait returned.
 */
NUBO_C_API nubo_status nubo_worker_all_reduce(nubo_worker* worker, nubo_buffer* buf,
                                              nubo_reduce_op op);
NUBO_C_API nubo_status nubo_worker_broadcast(nubo_worker* worker, nubo_buffer* buf, int root);
NUBO_C_API nubo_status nubo_worker_all_gather(nubo_worker* worker, const nubo_buffer* in,
                                              nubo_buffer* out);
NUBO_C_API nubo_status nubo_worker_reduce_scatter(nubo_worker* worker, const nubo_buffer* in,
                                                  nubo_buffer* out, nubo_reduce_op op);
NUBO_C_API nubo_status nubo_worker_all_to_all(nubo_worker* worker, const nubo_buffer* in,
                                              nubo_buffer* out);
NUBO_C_API nubo_status nubo_worker_barrier(nubo_worker* worker);

NUBO_C_API nubo_status nubo_worker_all_reduce_async(nubo_worker* worker, nubo_buffer* buf,
                                                    nubo_reduce_op op, nubo_pending** out);
NUBO_C_API nubo_status nubo_worker_broadcast_async(nubo_worker* worker, nubo_buffer* buf, int root,
                                                   nubo_pending** out);
NUBO_C_API nubo_status nubo_worker_all_gather_async(nubo_worker* worker, const nubo_buffer* in,
                                                    nubo_buffer* out, nubo_pending** out_pending);
NUBO_C_API nubo_status nubo_worker_reduce_scatter_async(nubo_worker* worker, const nubo_buffer* in,
                                                        nubo_buffer* out, nubo_reduce_op op,
                                                        nubo_pending** out_pending);
NUBO_C_API nubo_status nubo_worker_all_to_all_async(nubo_worker* worker, const nubo_buffer* in,
                                                    nubo_buffer* out, nubo_pending** out_pending);
NUBO_C_API nubo_status nubo_worker_barrier_async(nubo_worker* worker, nubo_pending** out);

/* Waits for the collective; its status (a second wait returns NUBO_OK at once). */
NUBO_C_API nubo_status nubo_pending_wait(nubo_pending* pending);
/* 1 once nubo_pending_wait would not block, else 0; 1 for NULL. */
NUBO_C_API int nubo_pending_done(const nubo_pending* pending);
/* Accepts NULL. An unwaited collective is waited for first; its error is dropped. */
NUBO_C_API void nubo_pending_free(nubo_pending* pending);

/*
 * ---- Memory the application owns, slices, DLPack ---------------------------------------------
 *  - nubo_worker_wrap: a buffer over `count` elements at `data` (host memory for host and sim
 *    workers, device memory of the worker's GPU for CUDA workers), without a copy; nubo never
 *    frees it, and it must outlive the buffer. NULL data is only allowed with count 0.
 *  - nubo_buffer_slice: a buffer viewing elements [offset, offset + count) of `buffer`; it keeps
 *    nubo's memory alive after `buffer` is freed. Free it with nubo_buffer_free.
 *  - nubo_buffer_data: the device pointer (host memory on host and sim workers); NULL for NULL.
 *  - nubo_worker_bytes_in_use: device memory nubo holds on the worker's device (wrapped memory
 *    is not counted).
 */
NUBO_C_API nubo_status nubo_worker_wrap(nubo_worker* worker, void* data, nubo_dtype type,
                                        size_t count, nubo_buffer** out);
NUBO_C_API nubo_status nubo_buffer_slice(nubo_buffer* buffer, size_t offset, size_t count,
                                         nubo_buffer** out);
NUBO_C_API void* nubo_buffer_data(nubo_buffer* buffer);
NUBO_C_API nubo_status nubo_worker_bytes_in_use(const nubo_worker* worker, size_t* out);

/* DLPack's tensor (dlpack/dlpack.h, version 0.6), declared only: include <dlpack/dlpack.h> to
   look inside. */
struct DLManagedTensor;

/*
 * Zero-copy exchange with NumPy, PyTorch, CuPy and JAX.
 *  - nubo_buffer_to_dlpack: *out is a one-dimensional compact tensor over the buffer's memory
 *    (kDLCPU for host and sim workers, kDLCUDA with the GPU's ordinal for CUDA ones). It shares
 *    the memory like a slice; the consumer calls its deleter when done.
 *  - nubo_buffer_from_dlpack: a buffer over the tensor's memory. On NUBO_OK the buffer owns the
 *    tensor and calls its deleter once the buffer and its slices are freed; on any error the
 *    tensor is untouched and still the caller's. NUBO_ERR_INVALID_ARGUMENT, naming the problem,
 *    for a tensor on another device, a dtype nubo has no type for (float64, uint8, vectors),
 *    strides that are not compact row-major, or a malformed shape.
 */
NUBO_C_API nubo_status nubo_buffer_to_dlpack(nubo_buffer* buffer, struct DLManagedTensor** out);
NUBO_C_API nubo_status nubo_buffer_from_dlpack(nubo_worker* worker, struct DLManagedTensor* tensor,
                                               nubo_buffer** out);

/* ---- Compute ------------------------------------------------------------------------------ */

typedef enum nubo_transpose {
  NUBO_TRANSPOSE_NO = 0,
  NUBO_TRANSPOSE_YES = 1,
  /* not a value: keeps every int a valid nubo_transpose in C++ */
  NUBO_TRANSPOSE_MAX_ENUM = 0x7fffffff
} nubo_transpose;

/* C = alpha op(A) op(B) + beta C, row-major (cblas_sgemm with CblasRowMajor, NumPy's C order):
   op(A) is m x k, op(B) k x n, C m x n. A leading dimension of 0 means packed. The buffers'
   type (f32, f16 or bf16, all three the same) is the GEMM's; products accumulate in f32. When
   beta is 0, C is not read. */
typedef struct nubo_worker_gemm_request {
  uint32_t struct_size;
  nubo_transpose trans_a, trans_b; /* default NUBO_TRANSPOSE_NO */
  size_t m, n, k;
  float alpha, beta;    /* default 1 and 0 */
  size_t lda, ldb, ldc; /* default 0: packed */
} nubo_worker_gemm_request;

/* Fills *gemm with the defaults (m, n, k are 0: set them). */
NUBO_C_API nubo_status nubo_worker_gemm_request_init(nubo_worker_gemm_request* gemm,
                                                     size_t struct_size);

/*
 * Compute on a worker's device, ordered on its stream: on CUDA workers each call queues and
 * returns (nubo_worker_synchronize waits); on host and sim workers it has finished on return.
 * Buffers must be the worker's own (created, wrapped, sliced or imported by it).
 *  - gemm: NUBO_ERR_INVALID_ARGUMENT when a buffer is too small for the shape, C overlaps A or
 *    B, or the types differ or are not floating-point;
 *  - fill: every element = value converted to the buffer's type (integer types take whole
 *    numbers in their range);
 *  - scale (x *= alpha), axpy (y += alpha x): f32, f16, bf16, computed in f32.
 */
NUBO_C_API nubo_status nubo_worker_gemm(nubo_worker* worker, const nubo_worker_gemm_request* gemm,
                                        const nubo_buffer* a, const nubo_buffer* b, nubo_buffer* c);
NUBO_C_API nubo_status nubo_worker_fill(nubo_worker* worker, nubo_buffer* x, double value);
NUBO_C_API nubo_status nubo_worker_scale(nubo_worker* worker, nubo_buffer* x, float alpha);
NUBO_C_API nubo_status nubo_worker_axpy(nubo_worker* worker, float alpha, const nubo_buffer* x,
                                        nubo_buffer* y);
NUBO_C_API nubo_status nubo_worker_synchronize(nubo_worker* worker);

/*
 * ---- Streams and events (CUDA workers; docs/parallel.md states the ordering rule) ----------
 * Everything a worker does is ordered on its stream. Work of the application on another stream
 * is ordered with an event: record a cudaEvent_t on that stream after the work and pass it to
 * nubo_worker_wait_native_event before the collective; or make that stream the worker's with
 * nubo_worker_use_stream, and nothing else is needed.
 *  - nubo_worker_native: the stream in use, the cuBLAS handle bound to it, the team's NCCL
 *    communicator (NULL when it uses none) and the device ordinal; NULLs and -1 on host and sim
 *    workers.
 *  - nubo_worker_use_stream: queue everything from now on, collectives included, on
 *    `cuda_stream` (a cudaStream_t of the worker's GPU; NULL is CUDA's legacy default stream),
 *    after the work queued so far. nubo_worker_use_own_stream goes back. Host and sim workers:
 *    NUBO_ERR_INVALID_ARGUMENT for a non-NULL stream.
 *  - nubo_worker_record_event: an event at the current end of the worker's stream;
 *    nubo_worker_wait_event makes the worker's later work wait for it (any worker of the same
 *    kind), without blocking the thread.
 */
typedef struct nubo_event nubo_event; /* owned by the caller: nubo_event_free */

typedef struct nubo_worker_native_info {
  uint32_t struct_size;
  void* cuda_stream;   /* cudaStream_t */
  void* cublas_handle; /* cublasHandle_t */
  void* nccl_comm;     /* ncclComm_t */
  int device_ordinal;  /* -1 on host and sim workers */
} nubo_worker_native_info;

NUBO_C_API nubo_status nubo_worker_native(const nubo_worker* worker, nubo_worker_native_info* out);
NUBO_C_API nubo_status nubo_worker_use_stream(nubo_worker* worker, void* cuda_stream);
NUBO_C_API nubo_status nubo_worker_use_own_stream(nubo_worker* worker);
NUBO_C_API nubo_status nubo_worker_record_event(nubo_worker* worker, nubo_event** out);
NUBO_C_API nubo_status nubo_worker_wait_event(nubo_worker* worker, const nubo_event* event);
NUBO_C_API nubo_status nubo_worker_wait_native_event(nubo_worker* worker, void* cuda_event);
/* Blocks until the work before the event has finished. */
NUBO_C_API nubo_status nubo_event_synchronize(const nubo_event* event);
/* 1 once the work before the event has finished, else 0; 1 for NULL. */
NUBO_C_API int nubo_event_done(const nubo_event* event);
/* The cudaEvent_t (for cudaStreamWaitEvent on a stream of yours); NULL on host and sim workers
   and for NULL. */
NUBO_C_API void* nubo_event_native(const nubo_event* event);
NUBO_C_API void nubo_event_free(nubo_event* event); /* accepts NULL */

#ifdef __cplusplus
}
#endif

#endif /* NUBO_PARALLEL_H */
