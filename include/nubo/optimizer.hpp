// nubo::ShardedOptimizer: SGD, Adam and AdamW over a flat buffer of parameters the application
// owns, with the optimiser's state sharded across the team (ZeRO stages 1 to 3), mixed
// precision with fp32 master weights and dynamic loss scaling, gradient clipping by global norm,
// gradients compressed to 16 bits on the wire, and checkpoints that resume on any world size.
// docs/sharded.md has the whole story, with the memory each stage holds.
//
//   nubo::ShardedOptions o{.optimizer = nubo::OptimizerKind::adamw, .lr = 1e-3f, .stage = 1,
//                          .precision = nubo::DType::bf16};
//   nubo::ShardLayout layout = nubo::ShardedOptimizer::layout_for(o, w.size(), {n});
//   auto params = w.alloc(nubo::DType::bf16, layout.padded_size());  // the first n are the model
//   auto grads = w.alloc(nubo::DType::bf16, layout.padded_size());
//   ... write the initial parameters ...
//   nubo::ShardedOptimizer opt(w, params, o, {n});
//   for (...) { ...backward into grads...; opt.step(grads); }  // params now hold the update
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "nubo/buffer.hpp"
#include "nubo/compute.hpp"
#include "nubo/dtype.hpp"
#include "nubo/export.hpp"
#include "nubo/parallel.hpp"

namespace nubo {

// Where each slice of a flat parameter buffer lives, and which part of it each rank owns.
// A slice (a layer, a bucket: what an application gathers or reduces at once) of n elements is
// cut into `world` shards of shard(i) = ceil(n / world) rounded up to kAlignment elements (so
// that every shard of a buffer nubo allocated starts 256-byte aligned, in f32, f16 and bf16);
// the slice takes padded(i) = world * shard(i) elements of the flat buffer, from offset(i), and
// its last padded(i) - size(i) elements are padding, kept at zero. Rank r owns elements
// [offset(i) + r * shard(i), + shard(i)) of every slice; its shard of the whole buffer is those
// pieces one after the other, shard_size() elements, slice i's from shard_offset(i).
class NUBO_API ShardLayout {
 public:
  static constexpr std::size_t kAlignment = 128;  // elements

  ShardLayout() = default;
  // invalid_argument for world < 1 or a size that overflows.
  ShardLayout(std::vector<std::size_t> slice_sizes, int world);

  int world() const { return world_; }
  std::size_t slices() const { return sizes_.size(); }
  std::size_t size(std::size_t i) const { return sizes_.at(i); }
  std::size_t shard(std::size_t i) const { return shards_.at(i); }
  std::size_t padded(std::size_t i) const {
    return shards_.at(i) * static_cast<std::size_t>(world_);
  }
  std::size_t offset(std::size_t i) const { return offsets_.at(i); }
  std::size_t shard_offset(std::size_t i) const { return shard_offsets_.at(i); }
  std::size_t padded_size() const { return padded_size_; }
  std::size_t shard_size() const { return shard_size_; }
  std::size_t parameters() const { return parameters_; }

 private:
  int world_ = 1;
  std::vector<std::size_t> sizes_, shards_, offsets_, shard_offsets_;
  std::size_t padded_size_ = 0, shard_size_ = 0, parameters_ = 0;
};

// Dynamic loss scaling: automatic is on for f16 only. Values are part of the C ABI.
enum class LossScaling : int { automatic = 0, on = 1, off = 2 };

// What a ZeRO stage shards, read once from its number: the optimizer, its saved state, the
// memory formula, the trainer and the cost model ask the plan; only StagePlan::of checks it.
struct StagePlan {
  int stage = 0;
  // Stages 1-3: the optimizer's state and the fp32 master weights are a shard per rank.
  bool state_sharded = false;
  // Stages 2-3: the gradients end as this rank's shard (a reduce-scatter); stages 0-1 keep the
  // whole gradient buffer backward writes.
  bool gradients_sharded = false;
  // Stage 3: the parameters are a shard per rank too, gathered for use.
  bool parameters_sharded = false;

  // ZeRO stage `stage`; outside 0-3, Error(invalid_argument): "<name> <stage> (0 to 3)".
  NUBO_API static StagePlan of(int stage, std::string_view name);
};

struct ShardedOptions {
  // The rule and its hyperparameters (OptimizerUpdate's; the step count is the optimizer's).
  OptimizerKind optimizer = OptimizerKind::adamw;
  float lr = 1e-3f;
  float momentum = 0.9f;                            // SGD
  float beta1 = 0.9f, beta2 = 0.999f, eps = 1e-8f;  // Adam, AdamW
  float weight_decay = 0.0f;
  // 0: replicated (all-reduce, every worker updates everything: plain data parallelism);
  // 1: optimizer state sharded; 2: gradients too; 3: parameters too (gather/release).
  int stage = 1;
  // The type of the application's parameters and gradients: f32, bf16 or f16. The optimizer's
  // master weights and state are f32 whatever it is.
  DType precision = DType::f32;
  // How the workers' gradients combine: avg (each worker's gradient is its own mean, as DDP's)
  // or sum (they are already scaled by the global batch).
  ReduceOp gradient_op = ReduceOp::avg;
  // Clip gradients to this global L2 norm (torch.nn.utils.clip_grad_norm_); 0: no clipping.
  float max_grad_norm = 0.0f;
  // fp16's dynamic loss scaling, with torch.cuda.amp.GradScaler's defaults: the loss is
  // multiplied by the scale before backward; a step whose gradients hold an inf or NaN on any
  // worker is skipped everywhere and multiplies the scale by backoff_factor; growth_interval
  // clean steps in a row multiply it by growth_factor.
  LossScaling loss_scaling = LossScaling::automatic;
  float init_scale = 65536.0f;
  float growth_factor = 2.0f;
  float backoff_factor = 0.5f;
  std::int64_t growth_interval = 2000;
  // f32 gradients carried as bf16 or f16 on the wire (half the bytes), as PyTorch's bf16/fp16
  // compression hooks: divided by the world size, converted, summed. f32: not compressed. Only
  // for precision f32 (16-bit gradients are already 16 bits).
  DType wire = DType::f32;
  // With a 16-bit wire: keep each worker's rounding error and add it to its next gradients.
  bool error_feedback = false;
};

// The optimizer's whole state as one logical state, the same whatever the world size: master
// weights, and the state vectors of the rule (SGD: m is the velocity; Adam: m and v), each the
// slices' elements one after the other without padding.
struct OptimizerState {
  std::vector<std::size_t> slice_sizes;
  int kind = 0;  // OptimizerKind
  std::vector<float> master, m, v;
  std::uint64_t step = 0;  // updates applied
  double loss_scale = 1.0;
  std::int64_t clean_steps = 0;  // since the scale last changed
};

// What the last step() did.
struct StepResult {
  bool applied = false;     // false: skipped for a non-finite gradient
  double grad_norm = 0;     // the global norm before clipping (0 when not computed)
  double loss_scale = 1.0;  // the scale for the next step's loss
};

class NUBO_API ShardedOptimizer {
 public:
  // The layout the buffers must have for these options in a team of `world` workers (stage 0:
  // the slices one after the other, padded as for one worker). slice_sizes empty: one slice.
  static ShardLayout layout_for(const ShardedOptions& options, int world,
                                std::vector<std::size_t> slice_sizes);

  // params: this worker's flat parameters (layout_for(...).padded_size() elements of
  // options.precision), holding rank 0's initial values on rank 0 (they are broadcast). Stages
  // 0 to 2 keep a view of it and write each update into it; stage 3 keeps only this rank's
  // shard, and the application may free it. Collective: every rank constructs its optimizer
  // together. invalid_argument for a size, type, stage or option that does not fit, and for
  // parameter counts that differ between the ranks (naming both).
  ShardedOptimizer(Worker& w, DeviceBuffer& params, const ShardedOptions& options,
                   std::vector<std::size_t> slice_sizes = {});
  ~ShardedOptimizer();
  ShardedOptimizer(ShardedOptimizer&&) noexcept;
  ShardedOptimizer& operator=(ShardedOptimizer&&) noexcept;

  const ShardLayout& layout() const;
  const ShardedOptions& options() const;

  // The loss scale to multiply the loss by before backward (1 without loss scaling).
  float loss_scale() const;
  std::uint64_t steps() const;  // updates applied

  // Slice i's gradients (padded(i) elements of the precision, or f32 with a compressed wire)
  // combined across the team, started now on the worker's progress thread so that they
  // overlap the backward pass still to run (DDP's buckets); step() waits for them. Stage 0:
  // all-reduced in place; stages 1 to 3: reduce-scattered into this rank's gradient shard,
  // after which the buffer may be reused (stage 2's memory). The buffer's padding is zeroed
  // first, and it must not be touched until step() returns.
  void reduce(std::size_t slice, DeviceBuffer& grads);
  // Reduces every slice of a whole gradient buffer (padded_size() elements) not reduced yet,
  // then applies the update: unscale and check (loss scaling), clip, the fused update of this
  // rank's shard, and (stages 1 and 2) the all-gather of the parameters into the application's
  // buffer. Gradient accumulation: call it once per optimiser step, after the micro-steps have
  // summed their gradients into the buffer without communicating (DDP's no_sync).
  StepResult step(DeviceBuffer& grads);
  // The same once reduce() has been called for every slice (stages 2 and 3).
  StepResult step();
  // Waits for the reductions reduce() started (step() does; a caller that times its step apart
  // from its communication calls it first).
  void wait_reductions();
  // Waits for them and drops them: no update, as a step abandoned.
  void discard();
  // The learning rate of the next steps (a schedule's), and the one in force.
  void set_learning_rate(float lr);
  float learning_rate() const;

  // Stage 3: slice i's parameters gathered from the team (size(i) elements of the precision),
  // valid until release(i). prefetch(i) starts the gathering now, so that it overlaps compute;
  // gather(i) waits for it. invalid_argument for a slice out of range, or for stages 0 to 2.
  DeviceBuffer gather(std::size_t slice);
  void prefetch(std::size_t slice);
  void release(std::size_t slice);

  // Bytes this worker has sent so far (gradients, parameters and the step's statistics), as
  // ring algorithms send them: an all-reduce 2(n-1)/n of its data, a reduce-scatter or an
  // all-gather (n-1)/n (nccl-tests' bus bytes).
  std::uint64_t bytes_communicated() const;

  // The logical state (collective: every rank gets it whole), and loading one written by any
  // world size and any cut into slices (collective; every rank passes the same).
  // invalid_argument for a state of another parameter count (naming both shapes) or of a rule
  // whose state differs (SGD's against Adam's).
  OptimizerState state();
  void load_state(const OptimizerState& state);
  // The state as a file (written atomically by rank 0; checksummed) and back (read by every
  // rank, so the path must be visible to all of them). corrupt for a damaged file.
  void save(const std::string& path);
  void load(const std::string& path);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Bytes per worker a model of `parameters` holds in parameters, gradients and optimizer state
// at a stage (0 to 3), for a rule, a precision and a world size: the formulas
// docs/sharded.md derives and nubo-cost plans with.
struct ShardedMemory {
  double parameters = 0, gradients = 0, optimizer = 0;
  double total() const { return parameters + gradients + optimizer; }
};
NUBO_API ShardedMemory sharded_memory(double parameters, int stage, OptimizerKind kind,
                                      DType precision, int world);

}  // namespace nubo
