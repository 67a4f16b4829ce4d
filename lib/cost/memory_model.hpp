// GPU memory of a training job described by its model (parameters, precision, optimizer): the
// model states as the ZeRO paper counts them (Rajbhandari et al. 2020, section 3.1: weights,
// gradients and optimizer states, each optionally partitioned over the data-parallel workers)
// plus an activation estimate (Korthikanti et al. 2022). docs/cost.md has the formulas.
#pragma once

#include <string>

#include "device/backend/gpu_catalog.hpp"
#include "nubo/cost.hpp"
#include "nubo/optimizer.hpp"

namespace nubo::cost::detail {

struct MemoryModel {
  bool modelled = false;  // false: no parameter count; memory is what the workload states
  double stated = 0;      // bytes per GPU the workload states (memory_per_gpu_bytes), else 0
  double parameters = 0;
  // What the states are made of: the optimizer's rule and the parameters' precision (f32, or
  // 16 bits with an fp32 master copy), for nubo::sharded_memory.
  OptimizerKind kind = OptimizerKind::adamw;
  DType precision = DType::bf16;
  double gradient_bytes = 0;  // per parameter, all-reduced each step
  double activations = 0;     // bytes per GPU, not partitioned
  int sharding = 0;           // ZeRO stage 0-3; -1: the least that fits
};

MemoryModel memory_model(const Workload& w);
// From a profile that records its model (parameters, ZeRO stage, optimizer): the model states by
// the formulas at any GPU count, and the rest of the measured memory (activations, buffers)
// carried as it was.
MemoryModel measured_memory(const Profile& p);

// The shape of a dense transformer of `parameters`, as GPT-3 and Llama scale (N = 12 L h^2 with
// h = 128 L): for the activation and KV cache estimates of a model described by its size.
struct DenseShape {
  double hidden = 0, layers = 0;
};
DenseShape dense_shape(double parameters);

// Model states per GPU (bytes) at a ZeRO stage over `gpus` data-parallel workers: stage 0 keeps
// everything on each; 1 partitions the optimizer states; 2 also the gradients; 3 also the weights.
// The formulas are nubo::sharded_memory's, the ones nubo's sharded optimizer holds.
double model_states(const MemoryModel& m, int stage, double gpus);

// What a checkpoint of the model holds, bytes: its weights and the optimizer's states (with mixed
// precision, the fp32 master copy among them), not the gradients, which a restart recomputes; 0
// when the model is not described by its parameters.
double checkpoint_bytes(const MemoryModel& m);

// What one GPU needs when the job runs on `gpus` of them: the stated figure, or model states at
// the workload's stage (or, for -1, the least stage whose states and activations fit in
// `capacity`) plus activations. `stage` reports the stage used (-1 when not modelled).
double memory_per_gpu(const MemoryModel& m, double gpus, double capacity, int* stage = nullptr);

// Why an option does not fit, and the way out: "needs 104.3 GiB per GPU (112.0 GB of weights,
// gradients and Adam states, plus 9.0 GiB of activations); A10G has 22.5 GiB; with ZeRO-3 (--zero
// 3) across 8 of them each needs 21.5 GiB; or take a GPU that holds it".
std::string memory_reason(const MemoryModel& m, const nubo::detail::GpuModel& gpu, double gpus,
                          double needed);

}  // namespace nubo::cost::detail
