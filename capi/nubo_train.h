/*
 * nubo_train.h: the data-parallel trainer in C (included by nubo.h; docs/train.md).
 *
 * An MLP classifier on Fashion-MNIST, trained data-parallel across a team of workers: create,
 * fit with a progress callback, evaluate on the test set, save and load checkpoints, and the
 * run's profile as JSON for the cost model (docs/profile.schema.json).
 *
 *   nubo_train_options o;
 *   nubo_trainer* t = NULL;
 *   nubo_train_evaluation_info e;
 *   nubo_train_options_init(&o, sizeof o);
 *   o.devices = "cpu:2";
 *   o.epochs = 10;
 *   if (nubo_trainer_create(&o, &t) != NUBO_OK || nubo_trainer_fit(t, NULL, NULL) != NUBO_OK)
 *     fprintf(stderr, "%s\n", nubo_last_error());
 *   e.struct_size = sizeof e;
 *   if (nubo_trainer_evaluate(t, &e) == NUBO_OK) printf("%.4f\n", e.accuracy);
 *   nubo_trainer_free(t);
 *
 * Conventions as in nubo.h (docs/abi.md): statuses, nubo_last_error(), sized structs with
 * *_init(ptr, sizeof *ptr), an opaque handle whose *_free accepts NULL, a caller-owned buffer
 * with the needed-size protocol. A trainer is used by one thread at a time.
 */
#ifndef NUBO_TRAIN_H
#define NUBO_TRAIN_H

#include "nubo.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum nubo_train_optimizer {
  NUBO_TRAIN_SGD = 0,  /* SGD with momentum (PyTorch's convention) */
  NUBO_TRAIN_ADAM = 1, /* Adam */
  /* not a value: keeps every int a valid nubo_train_optimizer in C++ */
  NUBO_TRAIN_OPTIMIZER_MAX_ENUM = 0x7fffffff
} nubo_train_optimizer;

typedef struct nubo_trainer nubo_trainer; /* owned by the caller: nubo_trainer_free */
/* struct nubo_team: nubo_parallel.h */

typedef struct nubo_train_options {
  uint32_t struct_size;
  /* Layer widths, input first, classes last; NULL/0: {784, 256, 128, 10}. Copied by create. */
  const size_t* layers;
  size_t layer_count;
  nubo_train_optimizer optimizer; /* NUBO_TRAIN_SGD */
  double lr;                      /* 0.05 */
  double momentum;                /* 0.9 (SGD) */
  size_t batch;                   /* 128: samples per step, all workers together */
  int epochs;                     /* 10: what nubo_trainer_fit trains to, in all */
  uint64_t seed;                  /* 1: initial parameters and the per-epoch shuffle */
  size_t bucket_bytes;            /* 25 MiB; 0: one all-reduce after backward */
  int autotune;                   /* nonzero: tune bucket_bytes, cached (NUBO_AUTOTUNE=0: off) */
  /* Where the workers run when team is NULL: "cpu", "cpu:N", "sim:N" or "cuda:I[,J...]";
     NULL: "cpu". Under nubo-run the processes join one team. */
  const char* devices;
  /* A team to train on instead (borrowed: it must outlive the trainer); NULL: from devices. */
  struct nubo_team* team;
  /* The Fashion-MNIST IDX files; NULL: /usr/share/datasets/fashion-mnist. */
  const char* dataset_dir;
  size_t subset; /* 0: every row; N: the first N rows of the train and test sets */
  /* Checkpoints written by fit (NULL: none): every checkpoint_every steps (0: only at the end
     and when cancelled), keeping the newest three. */
  const char* checkpoint_dir;
  uint64_t checkpoint_every;
  /* Nonzero: refuse to load a checkpoint written by another team (device kind or worker count);
     0 (default): load it and say so in one line. */
  int strict_resume;
  /* 0 (default): fit's periodic checkpoints are copied in memory and written in the background
     while training goes on (the final one is written before fit returns); nonzero: training
     stops while each is written. */
  int sync_checkpoints;
  /* Nonzero: the checkpoint interval follows Daly's formula from the measured write time and
     mtbi_s, the mean time between interruptions in seconds (> 0); checkpoint_every is then 0. */
  int checkpoint_auto;
  double mtbi_s;
  /* 0 (default): with a checkpoint_dir, the trainer continues from the newest checkpoint there
     that verifies (nubo_trainer_resumed_from names it); nonzero: it starts afresh. */
  int fresh;
  /* Sharding and precision (docs/sharded.md): zero_stage 0 (default) replicated, 1 optimizer
     state sharded, 2 and gradients, 3 and parameters; precision NUBO_DTYPE_F32 (default),
     NUBO_DTYPE_BF16 or NUBO_DTYPE_F16 (fp32 master weights; f16 with loss scaling);
     grad_compression NUBO_DTYPE_BF16 or NUBO_DTYPE_F16 carries f32 gradients in 16 bits
     (NUBO_DTYPE_F32: not compressed), error_feedback nonzero adding each worker's rounding to its
     next step; accumulate micro-batches per step (1); max_grad_norm clips (0: no clipping). */
  int zero_stage;
  nubo_dtype precision;
  nubo_dtype grad_compression;
  int error_feedback;
  int accumulate;
  double max_grad_norm;
} nubo_train_options;

NUBO_C_API nubo_status nubo_train_options_init(nubo_train_options* options, size_t struct_size);

/* Progress after each step, valid during the callback (C++: nubo::TrainProgress). */
typedef struct nubo_train_progress {
  uint32_t struct_size; /* this library's sizeof: read only the fields it covers */
  int epoch;            /* counted from 0 */
  int epochs;
  uint64_t step; /* steps done (global, across resumes) */
  uint64_t steps_per_epoch;
  uint64_t total_steps;
  double loss;     /* mean training loss of the last step */
  double accuracy; /* training accuracy of the last step */
  double samples_per_s;
  double eta_s; /* < 0: none (not known yet) */
  double elapsed_s;
  int checkpointed;             /* nonzero: a checkpoint was taken after this step */
  double checkpoint_interval_s; /* in force (checkpoint_auto: Daly's); 0: none by time */
} nubo_train_progress;

/* Return nonzero to go on, 0 to stop after this step. */
typedef int (*nubo_train_progress_callback)(const nubo_train_progress* progress, void* user);

/* Loss and accuracy on the test set (C++: nubo::Evaluation). */
typedef struct nubo_train_evaluation_info {
  uint32_t struct_size;
  double loss;
  double accuracy;
  size_t samples;
} nubo_train_evaluation_info;

/*
 * Loads the data, builds the team (unless options->team is given) and the model, and
 * broadcasts rank 0's initial parameters. NULL options: the defaults. Errors: a missing
 * dataset NUBO_ERR_NOT_FOUND; a damaged one NUBO_ERR_CORRUPT; layer sizes that do not fit the
 * data, a bad devices spec or option NUBO_ERR_INVALID_ARGUMENT. *out is NULL on error.
 */
NUBO_C_API nubo_status nubo_trainer_create(const nubo_train_options* options, nubo_trainer** out);
NUBO_C_API void nubo_trainer_free(nubo_trainer* trainer); /* accepts NULL */

/*
 * Trains until options->epochs epochs are done in all (a loaded trainer continues where the
 * checkpoint was). progress (NULL: none) is called on this thread after each step; when it
 * returns 0 the trainer finishes the step, checkpoints into checkpoint_dir when one is set, and
 * this returns NUBO_ERR_CANCELLED. Calling fit again continues.
 */
NUBO_C_API nubo_status nubo_trainer_fit(nubo_trainer* trainer,
                                        nubo_train_progress_callback progress, void* user);
/* Loss and accuracy on the test set (out->struct_size set by the caller). */
NUBO_C_API nubo_status nubo_trainer_evaluate(nubo_trainer* trainer,
                                             nubo_train_evaluation_info* out);
/* A checkpoint, written atomically (a nubo archive); restored by load. load reports a damaged
   file as NUBO_ERR_CORRUPT and a checkpoint of another model as NUBO_ERR_INVALID_ARGUMENT, and
   leaves the trainer unchanged then. */
NUBO_C_API nubo_status nubo_trainer_save(nubo_trainer* trainer, const char* path);
NUBO_C_API nubo_status nubo_trainer_load(nubo_trainer* trainer, const char* path);
/* Asks fit to stop after the step in progress: it checkpoints (with a checkpoint_dir) and
   returns NUBO_ERR_CANCELLED. Async-signal-safe, callable from any thread (an interruption
   watcher's callback, a signal handler); NULL is ignored. */
NUBO_C_API void nubo_trainer_request_stop(nubo_trainer* trainer);
/* Steps done so far; 0 for NULL. */
NUBO_C_API uint64_t nubo_trainer_steps_done(const nubo_trainer* trainer);
/* The checkpoint the trainer continued from when it was created ("" if none), NUL-terminated,
   with the needed-size protocol of nubo_trainer_profile_json. */
NUBO_C_API nubo_status nubo_trainer_resumed_from(const nubo_trainer* trainer, char* buf,
                                                 size_t capacity, size_t* needed);
/*
 * The run's profile as JSON (docs/profile.schema.json; what nubo-cost plan --profile reads),
 * NUL-terminated, into buf of capacity bytes, with the needed-size protocol of
 * nubo_device_report_json: a too-small buffer (or buf == NULL) gives NUBO_ERR_INVALID_ARGUMENT with
 * *needed set (and buf[0] = '\0' when capacity > 0).
 */
NUBO_C_API nubo_status nubo_trainer_profile_json(const nubo_trainer* trainer, char* buf,
                                                 size_t capacity, size_t* needed);

#ifdef __cplusplus
}
#endif

#endif /* NUBO_TRAIN_H */
