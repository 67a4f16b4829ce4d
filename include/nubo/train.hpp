// nubo::DataParallelTrainer: an MLP classifier (softmax cross-entropy; SGD with momentum or Adam)
// trained data-parallel across a Team. docs/train.md has the whole story.
//
//  - Rank 0 draws the initial parameters and broadcasts them; each step splits the global batch
//    across the workers (Worker::shard) and averages the gradients with all-reduce.
//  - Gradients live in buckets (25 MB by default, like PyTorch DDP), filled from the last layer
//    to the first; each bucket's all-reduce starts as soon as backward has produced it, so it
//    overlaps the rest of backward. Bucketing never changes the arithmetic of a gradient
//    element, so results equal the unbucketed ones.
//  - Checkpoints (save/load) are nubo archives holding the parameters, the optimizer state, the
//    step, the RNG state and the position in the data: a resumed run repeats the losses of an
//    uninterrupted one exactly.
//
//   auto train = nubo::load_fashion_mnist("train");
//   nubo::Team team(...);
//   nubo::DataParallelTrainer t(team, {.layers = {784, 256, 128, 10}}, train);
//   t.fit(10, [](const nubo::TrainProgress& p) { ...; return true; });
//   auto m = t.evaluate(*nubo::load_fashion_mnist("test"));
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "nubo/cost.hpp"
#include "nubo/dataset.hpp"
#include "nubo/export.hpp"
#include "nubo/parallel.hpp"

namespace nubo {

enum class Optimizer { sgd = 0, adam = 1 };

inline constexpr std::size_t kDefaultBucketBytes = 25u << 20;  // PyTorch DDP's bucket_cap_mb

struct TrainerOptions {
  // Layer widths, input first, classes last: {784, 256, 128, 10}. ReLU between layers.
  std::vector<std::size_t> layers;
  Optimizer optimizer = Optimizer::sgd;
  float lr = 0.05f;
  float momentum = 0.9f;                            // SGD
  float beta1 = 0.9f, beta2 = 0.999f, eps = 1e-8f;  // Adam
  float weight_decay = 0.0f;
  // Cosine decay of the learning rate from lr to 0 over this many steps (SGDR without
  // restarts); 0: constant. It depends on the step only, so resuming keeps it exact.
  std::uint64_t lr_decay_steps = 0;
  std::size_t global_batch = 128;  // samples per step, all workers together
  std::uint64_t seed = 1;          // initial parameters and the per-epoch shuffle
  // Sharding and precision (docs/sharded.md): the update runs in a ShardedOptimizer whose slices
  // are the gradient buckets. zero_stage 0 replicates everything (plain data parallelism); 1
  // shards the optimizer state, 2 the gradients too, 3 the parameters too (each bucket's
  // gathered before its layers run). precision f32, bf16 or f16: the parameters, gradients and
  // GEMMs, with fp32 master weights and elementwise work in f32; f16 with dynamic loss scaling.
  int zero_stage = 0;
  DType precision = DType::f32;
  // f32 gradients carried as bf16 or f16 between the workers (f32: not compressed), with
  // each worker's rounding error fed into its next step when error_feedback is set.
  DType grad_compression = DType::f32;
  bool error_feedback = false;
  // Micro-batches per step: each worker's rows are split into this many, their gradients summed
  // without communication (DDP's no_sync), and reduced once. The step's arithmetic stays that
  // of the whole batch; activations need 1 / accumulate of the memory.
  int accumulate = 1;
  // Clip the gradients to this global L2 norm before each update; 0: no clipping.
  float max_grad_norm = 0.0f;
  // Gradient bucket capacity in bytes. 0: no buckets (one all-reduce after backward).
  std::size_t bucket_bytes = kDefaultBucketBytes;
  // Pick bucket_bytes by measuring a few candidates on first use, cached on disk
  // (NUBO_AUTOTUNE=0 turns it off; NUBO_AUTOTUNE_CACHE sets the cache file).
  bool autotune = false;
  // Checkpoints taken by fit(): into checkpoint_dir (empty: none), every checkpoint_every
  // steps and/or every checkpoint_seconds (0: not by that measure), keeping the newest
  // checkpoint_keep.
  std::string checkpoint_dir;
  std::uint64_t checkpoint_every = 0;
  double checkpoint_seconds = 0;
  int checkpoint_keep = 3;
  // With a checkpoint_dir, a new trainer continues from the newest checkpoint there that
  // verifies (resume_latest; resumed_from() names it), so that a restarted job needs nothing
  // else; fresh starts afresh instead: an earlier run's checkpoints there are moved into
  // checkpoint_dir/earlier-<UTC time>/ (an s3:// prefix holding some is refused), so that the
  // new run's are neither pruned against them nor resumed past by them.
  bool fresh = false;
  // A checkpoint records the team that wrote it (device kind and worker count). Resuming on
  // another team is allowed (the state is replicated) and said in one line; with
  // strict_resume it is refused, for runs that must repeat exactly.
  bool strict_resume = false;
  // fit()'s periodic checkpoints are copied in memory at a step boundary and written by a
  // background thread while training goes on (at most one write in flight; the stall is the
  // copy). The final checkpoint (the end, or a stop) waits for the write in flight and is
  // written before fit() returns. false: every checkpoint stops training while it is written.
  bool async_checkpoints = true;
  // The interval chosen for the run (nubo-train --checkpoint-every auto): Daly's optimum, the
  // function nubo-cost checkpoint uses (cost::checkpoint_plan), from the measured time to write
  // a checkpoint (delta) and mtbi_s, the mean time between interruptions. The first checkpoint
  // follows the first step, to measure delta; the interval is planned again whenever a write's
  // delta differs by more than 25% from the one it was planned with. Needs checkpoint_dir and
  // mtbi_s > 0, and replaces checkpoint_every and checkpoint_seconds (leave them 0).
  bool checkpoint_auto = false;
  double mtbi_s = 0;
};

struct TrainProgress {
  int epoch = 0;           // counted from 0
  int epochs = 0;          // fit()'s target
  std::uint64_t step = 0;  // steps done so far (global, across resumes)
  std::uint64_t steps_per_epoch = 0;
  std::uint64_t total_steps = 0;  // for fit()'s epochs
  double loss = 0;                // mean training loss of the last step
  double accuracy = 0;            // training accuracy of the last step
  double samples_per_s = 0;
  double eta_s = -1;     // -1: not known yet
  double elapsed_s = 0;  // in this fit() call
  // A checkpoint was taken after this step: written, or (async_checkpoints) being written in
  // the background, and written before fit() returns.
  bool checkpointed = false;
  // The checkpoint interval in force in seconds (checkpoint_auto: Daly's; 0: none by time).
  double checkpoint_interval_s = 0;
};
// Called after each step on the calling thread. Return false to stop: fit() then finishes the
// step, writes a checkpoint (when a checkpoint_dir is set) and returns FitResult::stopped.
using TrainProgressFn = std::function<bool(const TrainProgress&)>;

enum class FitResult { finished = 0, stopped = 1 };

struct Evaluation {
  double loss = 0;
  double accuracy = 0;
  std::size_t samples = 0;
};

struct StepStats {
  double loss = 0, accuracy = 0;
  std::size_t samples = 0;
};

class NUBO_API DataParallelTrainer {
 public:
  // Checks the options against the data (invalid_argument naming the problem), then builds the
  // model on every worker and broadcasts rank 0's initial parameters.
  DataParallelTrainer(Team& team, const TrainerOptions& options,
                      std::shared_ptr<const Dataset> train);
  ~DataParallelTrainer();
  DataParallelTrainer(const DataParallelTrainer&) = delete;
  DataParallelTrainer& operator=(const DataParallelTrainer&) = delete;

  // One step on the next global batch of the shuffled data.
  StepStats step();
  // Trains until `epochs` epochs are done in all (a resumed trainer continues where it was).
  FitResult fit(int epochs, const TrainProgressFn& progress = {});
  // Loss and accuracy over the whole dataset (split across the workers).
  Evaluation evaluate(const Dataset& data);

  // Writes a checkpoint atomically (a nubo archive, zstd); by team rank 0 only, the others
  // wait. load() restores one: corrupt for a damaged file, invalid_argument for a checkpoint of
  // another model (naming both shapes).
  void save(const std::string& path);
  void load(const std::string& path);
  // In checkpoint_dir: the newest checkpoint that loads; a damaged newer one is skipped with a
  // warning. Returns its path, or "" when there is none.
  std::string resume_latest();
  // The checkpoint the trainer continued from when it was made ("" if none: fresh, no
  // checkpoint_dir, or none there).
  const std::string& resumed_from() const;
  // Where fit() writes the checkpoint after `step` steps.
  std::string checkpoint_path(std::uint64_t step) const;

  std::uint64_t steps_done() const;
  int epoch() const;
  std::uint64_t steps_per_epoch() const;
  std::size_t parameter_count() const;
  std::size_t bucket_bytes() const;  // in force (after autotuning)
  std::size_t bucket_count() const;
  // "off" (not asked, or NUBO_AUTOTUNE=0), "hit" (from the cache) or "miss" (measured).
  std::string autotune_result() const;
  // The parameters in checkpoint order (W0 row-major in x out, b0, W1, b1, ...): the fp32
  // master weights, gathered whole from the shards. Across processes every process calls it.
  std::vector<float> parameters() const;

  // What the run measured, for the cost model (docs/profile.schema.json).
  cost::Profile profile() const;

  // Asks fit() to stop after the current step (async-signal-safe: sets an atomic flag).
  void request_stop() noexcept;

 private:
  struct Impl;  // lib/train/trainer_impl.hpp
  std::unique_ptr<Impl> impl_;
};

// The profile's JSON text, as nubo-train --profile writes it.
NUBO_API std::string profile_json(const cost::Profile& profile);

}  // namespace nubo
