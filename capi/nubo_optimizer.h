/*
 * nubo_optimizer.h: the sharded optimizer and the mixed-precision kernels through the C ABI
 * (docs/sharded.md). Included by nubo.h; the conventions are nubo.h's.
 *
 * A nubo_sharded_optimizer runs SGD, Adam or AdamW over a flat buffer of parameters the
 * application owns, with the state sharded across the team (ZeRO stages 1 to 3), fp32 master
 * weights for bf16/f16 parameters, fp16's dynamic loss scaling, gradient clipping, gradients
 * compressed to 16 bits on the wire, and checkpoints that resume on any world size.
 *
 *   nubo_sharded_options o;
 *   nubo_sharded_options_init(&o, sizeof o);
 *   o.precision = NUBO_DTYPE_BF16;
 *   size_t n = 1000000, padded = 0;
 *   nubo_sharded_padded_size(&o, world, &n, 1, &padded);   // allocate padded elements
 *   ...params and grads: nubo_buffer_create(worker, NUBO_DTYPE_BF16, padded, &params)...
 *   nubo_sharded_optimizer* opt = NULL;
 *   nubo_sharded_optimizer_create(worker, params, &o, &n, 1, &opt);
 *   for (...) { ...backward into grads...; nubo_sharded_optimizer_step(opt, grads, NULL); }
 */
#ifndef NUBO_OPTIMIZER_H
#define NUBO_OPTIMIZER_H

#include "nubo.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The update rules, as PyTorch names them (C++: nubo::OptimizerKind). */
typedef enum nubo_update_rule {
  NUBO_UPDATE_SGD = 0,   /* SGD with momentum: v = momentum v + (g + wd w); w -= lr v */
  NUBO_UPDATE_ADAM = 1,  /* Adam, weight decay added to the gradient */
  NUBO_UPDATE_ADAMW = 2, /* AdamW, weight decay decoupled */
  /* not a value: keeps every int a valid nubo_update_rule in C++ */
  NUBO_UPDATE_MAX_ENUM = 0x7fffffff
} nubo_update_rule;

/* fp16's dynamic loss scaling (C++: nubo::LossScaling): automatic is on for f16 only. */
typedef enum nubo_loss_scaling {
  NUBO_LOSS_SCALING_AUTOMATIC = 0,
  NUBO_LOSS_SCALING_ON = 1,
  NUBO_LOSS_SCALING_OFF = 2,
  /* not a value: keeps every int a valid nubo_loss_scaling in C++ */
  NUBO_LOSS_SCALING_MAX_ENUM = 0x7fffffff
} nubo_loss_scaling;

/* Options of nubo_sharded_optimizer_create (C++: nubo::ShardedOptions). */
typedef struct nubo_sharded_options {
  uint32_t struct_size;
  nubo_update_rule optimizer; /* NUBO_UPDATE_ADAMW */
  float lr;                   /* 1e-3 */
  float momentum;             /* 0.9 (SGD) */
  float beta1, beta2, eps;    /* 0.9, 0.999, 1e-8 (Adam, AdamW) */
  float weight_decay;         /* 0 */
  /* 0: replicated; 1 (default): optimizer state sharded; 2: gradients too; 3: parameters too */
  int stage;
  nubo_dtype precision;       /* the parameters' and gradients' type: f32 (default), bf16, f16 */
  nubo_reduce_op gradient_op; /* NUBO_REDUCE_AVG (DDP's mean) or NUBO_REDUCE_SUM */
  float max_grad_norm;        /* clip to this global L2 norm; 0 (default): no clipping */
  nubo_loss_scaling loss_scaling;
  float init_scale;        /* 65536 */
  float growth_factor;     /* 2 */
  float backoff_factor;    /* 0.5 */
  int64_t growth_interval; /* 2000 clean steps */
  /* f32 gradients carried as NUBO_DTYPE_BF16 or NUBO_DTYPE_F16; NUBO_DTYPE_F32: not compressed */
  nubo_dtype wire;
  int error_feedback; /* nonzero: each worker's rounding error added to its next gradients */
} nubo_sharded_options;

NUBO_C_API nubo_status nubo_sharded_options_init(nubo_sharded_options* options, size_t struct_size);

/* Slice i of an optimizer's layout: its parameters, where it starts in the flat padded buffer,
   the elements it takes there (padded), and each rank's shard of it. */
typedef struct nubo_shard_slice_info {
  uint32_t struct_size; /* set to sizeof before the call */
  size_t size, offset, padded, shard, shard_offset;
} nubo_shard_slice_info;

/* What the last step did (C++: nubo::StepResult). */
typedef struct nubo_sharded_step_summary {
  uint32_t struct_size; /* set to sizeof before the call */
  int applied;          /* nonzero: applied; 0: skipped for a non-finite gradient */
  double grad_norm;     /* the global norm before clipping; 0 when not computed */
  double loss_scale;    /* the scale for the next step's loss */
} nubo_sharded_step_summary;

typedef struct nubo_sharded_optimizer nubo_sharded_optimizer; /* nubo_sharded_optimizer_free */
/* nubo_parallel.h defines them; declared here, as nubo.h includes this header first. */
struct nubo_worker;
struct nubo_buffer;

/* The elements the flat parameter and gradient buffers must hold for these options (NULL: the
   defaults) in a team of `world` workers, for slices of these sizes (slice_count 0: one of
   slice_sizes[0]... give at least one). */
NUBO_C_API nubo_status nubo_sharded_padded_size(const nubo_sharded_options* options, int world,
                                                const size_t* slice_sizes, size_t slice_count,
                                                size_t* out);

/*
 * Collective: every rank of the team creates its optimizer together. params: this worker's
 * flat parameters (the padded size, of options->precision), rank 0's values broadcast to all.
 * Stages 0-2 keep a view of it and write every update into it; stage 3 keeps only this rank's
 * shard (params may then be freed). slice_count 0: one slice of the whole buffer.
 */
NUBO_C_API nubo_status nubo_sharded_optimizer_create(struct nubo_worker* worker,
                                                     struct nubo_buffer* params,
                                                     const nubo_sharded_options* options,
                                                     const size_t* slice_sizes, size_t slice_count,
                                                     nubo_sharded_optimizer** out);
NUBO_C_API void nubo_sharded_optimizer_free(nubo_sharded_optimizer* optimizer); /* NULL ok */
NUBO_C_API nubo_status nubo_sharded_optimizer_slice_count(const nubo_sharded_optimizer* optimizer,
                                                          size_t* out);
NUBO_C_API nubo_status nubo_sharded_optimizer_slice(const nubo_sharded_optimizer* optimizer,
                                                    size_t slice, nubo_shard_slice_info* out);
/* The loss scale to multiply the loss by before backward (1 without loss scaling). */
NUBO_C_API nubo_status nubo_sharded_optimizer_loss_scale(const nubo_sharded_optimizer* optimizer,
                                                         float* out);
NUBO_C_API nubo_status nubo_sharded_optimizer_steps(const nubo_sharded_optimizer* optimizer,
                                                    uint64_t* out);
NUBO_C_API nubo_status nubo_sharded_optimizer_set_lr(nubo_sharded_optimizer* optimizer, float lr);
/* Bytes this worker has sent so far, as ring algorithms send them (docs/sharded.md). */
NUBO_C_API nubo_status
nubo_sharded_optimizer_bytes_communicated(const nubo_sharded_optimizer* optimizer, uint64_t* out);

/*
 * Gradients and the update.
 *  - reduce: slice i's gradients (padded elements) combined across the team, started now so that
 *    they overlap the rest of backward; the buffer is not to be touched until step returns.
 *  - step: grads NULL once every slice was reduced, else the whole gradient buffer (its slices
 *    not reduced yet are reduced now); then unscale and check, clip, update this rank's shard,
 *    and (stages 1-2) all-gather the parameters. out may be NULL.
 *  - gather (stage 3): slice i's parameters gathered from the team, valid until release; prefetch
 *    starts the gathering early. The buffer is the caller's to free (nubo_buffer_free).
 */
NUBO_C_API nubo_status nubo_sharded_optimizer_reduce(nubo_sharded_optimizer* optimizer,
                                                     size_t slice, struct nubo_buffer* grads);
NUBO_C_API nubo_status nubo_sharded_optimizer_step(nubo_sharded_optimizer* optimizer,
                                                   struct nubo_buffer* grads,
                                                   nubo_sharded_step_summary* out);
NUBO_C_API nubo_status nubo_sharded_optimizer_gather(nubo_sharded_optimizer* optimizer,
                                                     size_t slice, struct nubo_buffer** out);
NUBO_C_API nubo_status nubo_sharded_optimizer_prefetch(nubo_sharded_optimizer* optimizer,
                                                       size_t slice);
NUBO_C_API nubo_status nubo_sharded_optimizer_release(nubo_sharded_optimizer* optimizer,
                                                      size_t slice);

/* The state as one file whatever the world size (collective; written by rank 0, read by every
   rank): NUBO_ERR_CORRUPT for a damaged file, NUBO_ERR_INVALID_ARGUMENT for another model's. */
NUBO_C_API nubo_status nubo_sharded_optimizer_save(nubo_sharded_optimizer* optimizer,
                                                   const char* path);
NUBO_C_API nubo_status nubo_sharded_optimizer_load(nubo_sharded_optimizer* optimizer,
                                                   const char* path);

/* Bytes per worker at a ZeRO stage (C++: nubo::ShardedMemory). */
typedef struct nubo_sharded_memory_info {
  uint32_t struct_size; /* set to sizeof before the call */
  double parameters, gradients, optimizer;
  double total; /* (C++: total()) */
} nubo_sharded_memory_info;
NUBO_C_API nubo_status nubo_sharded_memory_per_worker(double parameters, int stage,
                                                      nubo_update_rule kind, nubo_dtype precision,
                                                      int world, nubo_sharded_memory_info* out);

/*
 * The mixed-precision kernels of a worker (ordered on its stream, like nubo_worker_axpy):
 *  - cast: out = in converted between f32, f16 and bf16 (the same size);
 *  - unscale_check: grads *= inv_scale, then stats (2 f32) gets stats[0] = 1 on a non-finite
 *    element and stats[1] += the sum of the squares;
 *  - optimizer_step: the fused update of master (f32) from grads (f32, f16 or bf16) with m
 *    (SGD's velocity, Adam's first moment) and v (Adam's second; NULL for SGD); params, when not
 *    NULL, receives the result in its own type.
 */
typedef struct nubo_optimizer_update {
  uint32_t struct_size;
  nubo_update_rule kind;
  float lr, momentum, beta1, beta2, eps, weight_decay;
  int64_t step;     /* Adam's t, from 1 */
  float grad_scale; /* every gradient is multiplied by it first (1: exact) */
} nubo_optimizer_update;
/* Fills *update with the defaults (AdamW, lr 1e-3, step 1, grad_scale 1). */
NUBO_C_API nubo_status nubo_optimizer_update_init(nubo_optimizer_update* update,
                                                  size_t struct_size);
NUBO_C_API nubo_status nubo_worker_cast(struct nubo_worker* worker, const struct nubo_buffer* in,
                                        struct nubo_buffer* out);
NUBO_C_API nubo_status nubo_worker_unscale_check(struct nubo_worker* worker,
                                                 struct nubo_buffer* grads, float inv_scale,
                                                 struct nubo_buffer* stats);
NUBO_C_API nubo_status nubo_worker_optimizer_step(struct nubo_worker* worker,
                                                  const nubo_optimizer_update* update,
                                                  struct nubo_buffer* master,
                                                  const struct nubo_buffer* grads,
                                                  struct nubo_buffer* m, struct nubo_buffer* v,
                                                  struct nubo_buffer* params);

#ifdef __cplusplus
}
#endif

#endif /* NUBO_OPTIMIZER_H */
