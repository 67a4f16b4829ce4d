#include "cost/memory_model.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "nubo/error.hpp"

namespace nubo::cost::detail {
namespace {

std::string gib(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f GiB", bytes / double(1u << 30));
  return buf;
}

bool half_precision(DType d) {
  return d == DType::f16 || d == DType::bf16;
}

}  // namespace

MemoryModel memory_model(const Workload& w) {
  MemoryModel m;
  m.stated = w.memory_per_gpu_bytes;
  m.sharding = w.sharding;
  if (w.sharding < -1 || w.sharding > 3)
    throw Error(Errc::invalid_argument,
                "workload: sharding is " + std::to_string(w.sharding) +
                    "; give a ZeRO stage 0-3, or -1 for the least that fits");
  if (w.parameters <= 0 || w.profile) return m;
  m.modelled = true;
  m.parameters = w.parameters;
  // Mixed precision keeps 16-bit weights and gradients for the passes and an fp32 master copy
  // with the optimizer's fp32 states (ZeRO's K = 12 for Adam: master, momentum, variance).
  const bool mixed = half_precision(w.dtype);
  m.kind = w.optimizer == Optimizer::adam ? OptimizerKind::adamw : OptimizerKind::sgd;
  m.precision = mixed ? w.dtype : DType::f32;
  m.gradient_bytes = mixed ? 2 : 4;
  // Activations of a dense transformer of this size, without recomputation (Korthikanti et al.
  // 2022, eq. 2 with flash attention: 34 s b h bytes per layer in 16-bit).
  const auto shape = dense_shape(w.parameters);
  const double seq = w.tokens_per_sample();
  m.activations = 34 * seq * w.micro_batch * shape.hidden * shape.layers * (mixed ? 1 : 2);
  return m;
}

MemoryModel measured_memory(const Profile& p) {
  MemoryModel m;
  m.modelled = true;
  m.parameters = p.parameters;
  m.sharding = p.zero_stage;
  m.kind = p.optimizer == "sgd" ? OptimizerKind::sgd : OptimizerKind::adamw;
  m.precision = half_precision(p.dtype) ? p.dtype : DType::f32;
  m.gradient_bytes = half_precision(p.dtype) ? 2 : 4;
  m.activations =
      std::max(0.0, p.memory_per_device_bytes - model_states(m, p.zero_stage, p.devices));
  return m;
}

DenseShape dense_shape(double parameters) {
  const double hidden = std::cbrt(128 * parameters / 12);
  return {hidden, hidden / 128};
}

double model_states(const MemoryModel& m, int stage, double gpus) {
  const int n = static_cast<int>(std::min(std::max(1.0, gpus), 1e9));
  return sharded_memory(m.parameters, std::min(std::max(stage, 0), 3), m.kind, m.precision, n)
      .total();
}

double checkpoint_bytes(const MemoryModel& m) {
  if (!m.modelled || m.parameters <= 0) return 0;
  const auto whole = sharded_memory(m.parameters, 0, m.kind, m.precision, 1);
  return whole.parameters + whole.optimizer;
}

double memory_per_gpu(const MemoryModel& m, double gpus, double capacity, int* stage) {
  if (stage) *stage = -1;
  if (!m.modelled) return m.stated;
  if (m.stated > 0) return m.stated;
  int s = m.sharding;
  if (s < 0) {
    s = 0;
    while (s < 3 && model_states(m, s, gpus) + m.activations > capacity) ++s;
  }
  if (stage) *stage = s;
  return model_states(m, s, gpus) + m.activations;
}

std::string memory_reason(const MemoryModel& m, const nubo::detail::GpuModel& gpu, double gpus,
                          double needed) {
  const double capacity = static_cast<double>(gpu.memory_bytes);
  std::string out = "needs " + gib(needed) + " of GPU memory per GPU";
  if (!m.modelled || m.stated > 0) return out + "; " + gpu.model + " has " + gib(capacity);
  int stage = 0;
  memory_per_gpu(m, gpus, capacity, &stage);
  char states[64];
  std::snprintf(states, sizeof states, "%.1f GB", model_states(m, stage, gpus) / 1e9);
  out += " (" + std::string(states) + " of model states at ZeRO-" + std::to_string(stage) +
         " plus " + gib(m.activations) + " of activations); " + gpu.model + " has " + gib(capacity);
  const double room = capacity - m.activations;
  if (room <= 0) return out + "; its activations alone do not fit: take a larger GPU";
  // The fewest of these GPUs whose full partitioning fits, when that is more than this option.
  const double full = model_states(m, 0, 1);
  const double n = std::ceil(full / room);
  if (stage < 3)
    out += "; with ZeRO-3 (--zero 3) across " +
           std::to_string(static_cast<long long>(std::max(n, gpus))) + " of them each needs " +
           gib(full / std::max(n, gpus) + m.activations);
  else
    out += "; ZeRO-3 needs at least " + std::to_string(static_cast<long long>(n)) +
           " of them (--nodes)";
  return out + ", or take a GPU that holds it";
}

}  // namespace nubo::cost::detail
